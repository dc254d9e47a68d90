package statuspage

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
)

// snapshots is a Source of given informers.
type snapshots []informer.Snapshotter

func (s snapshots) Snapshots() []informer.Snapshot {
	out := make([]informer.Snapshot, len(s))
	for i, inf := range s {
		out[i] = inf.Snapshot()
	}
	return out
}

// An informer whose Fresh call outlasted its bound is shown stale, with
// how far behind, in JSON and HTML; a later success shows it fresh.
func TestStatusFreshness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		if err := srv.InjectWatchFault(fake.WatchFault{Delay: 3 * time.Second}); err != nil {
			t.Fatal(err)
		}
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Name: "configmaps", FreshnessBound: time.Second,
			Source: srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR})})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		defer func() { cancel(); <-done }()
		if err := inf.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		h := Handler(snapshots{inf}, Options{})
		if _, body := get(t, h, "/", ""); !strings.Contains(body, `<td class="freshness">unchecked</td>`) {
			t.Errorf("before any Fresh call: %s", body)
		}

		if _, err := srv.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}); err != nil {
			t.Fatal(err)
		}
		fctx, fcancel := context.WithTimeout(t.Context(), 2*time.Second)
		if err := inf.Fresh(fctx); err == nil {
			t.Fatal("Fresh succeeded before the delayed write arrived")
		}
		fcancel()

		_, body := get(t, h, "/?format=json", "")
		var rep Report
		if err := json.Unmarshal([]byte(body), &rep); err != nil {
			t.Fatal(err)
		}
		f := rep.Informers[0].Freshness
		if !f.Stale || f.Reason != informer.StaleBehind || f.BehindBy != 1 || f.ServerResourceVersion != srv.ResourceVersion() || rep.Informers[0].Healthy {
			t.Errorf("JSON of a stale informer: %+v (healthy %t)\n%s", f, rep.Informers[0].Healthy, body)
		}
		_, body = get(t, h, "/", "")
		for _, want := range []string{` stale" data-name="configmaps"`, `<td class="freshness">stale (Behind), 1 behind ` + srv.ResourceVersion() + `</td>`,
			`<td class="reason">Other</td>`, "the cache is stale"} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q:\n%s", want, body)
			}
		}

		time.Sleep(2 * time.Second)
		if err := inf.Fresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, body = get(t, h, "/", "")
		if strings.Contains(body, " stale\"") || !strings.Contains(body, `<td class="freshness">fresh at `) || !strings.Contains(body, `class="informer healthy`) {
			t.Errorf("page after a successful Fresh:\n%s", body)
		}
	})
}
