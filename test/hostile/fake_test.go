package hostile

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
)

// TestDroppedEndBookmarkFallsBack: against fake's apiserver with every
// streaming list's k8s.io/initial-events-end bookmark dropped (a proxy that
// strips it), the informer is not synced before StreamDeadline, is synced
// by a paginated list right after it, says so in Status, and never streams
// again: a relist after a 410 is a paginated list. client-go waits for ever
// (kubernetes#140890).
func TestDroppedEndBookmarkFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := fake.NewServer(fake.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"a", "b", "c"} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}}
			if _, err := srv.Create(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
		}
		if err := srv.InjectWatchFault(fake.WatchFault{DropInitialEventsEnd: true}); err != nil {
			t.Fatal(err)
		}
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{
			Name:   "dropped-end",
			Source: srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR}),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
		done := make(chan error, 1)
		go func() { done <- inf.Run(ctx) }()

		time.Sleep(2*time.Minute - time.Second)
		synctest.Wait()
		if inf.HasSynced() {
			t.Fatalf("synced before the stream deadline without an end bookmark: %+v", inf.Status())
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st := inf.Status()
		if !inf.HasSynced() || st.StreamFallback != reflector.ReasonStreamIncomplete {
			t.Fatalf("after the stream deadline: synced=%t status=%+v", inf.HasSynced(), st)
		}
		if n := len(inf.Reader().List()); n != 3 {
			t.Errorf("cached %d objects, want 3", n)
		}

		// A relist after a 410 lists with pagination: no stream again.
		srv.ResetCalls()
		if err := srv.FailNext(fake.Failure{Verbs: fake.VerbWatch, Times: 1, Kind: fake.Expired, InStream: true}); err != nil {
			t.Fatal(err)
		}
		srv.CloseWatches(fake.ConfigMaps().GVR)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		for _, c := range srv.Calls() {
			if o := c.Options; o.SendInitialEvents != nil && *o.SendInitialEvents {
				t.Errorf("streamed again after the fallback: %+v", o)
			}
		}
		var lists int
		for _, c := range srv.Calls() {
			if c.Verb == fake.VerbList {
				lists++
			}
		}
		if lists == 0 {
			t.Errorf("no paginated relist after the 410: %+v", srv.Calls())
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
