package promprovider

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
)

// informer_stale and informer_behind_resource_versions follow the
// informer's Freshness: absent and 0 before any Fresh call, 1 and the
// distance once a call outlasted the bound, 0 and 0 after a success.
func TestFreshnessMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		if err := srv.InjectWatchFault(fake.WatchFault{Delay: 3 * time.Second}); err != nil {
			t.Fatal(err)
		}
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Name: "configmaps", FreshnessBound: time.Second,
			Source: srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewPedanticRegistry()
		p, err := New(Options{Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		p.AddInformer(inf, cmGVR)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		defer func() { cancel(); <-done }()
		if err := inf.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		check := func(stale float64, behind float64, behindKnown bool) {
			t.Helper()
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]float64{}
			for _, mf := range mfs {
				for _, m := range mf.Metric {
					byName[mf.GetName()] = m.GetGauge().GetValue()
				}
			}
			if got, ok := byName["informer_stale"]; !ok || got != stale {
				t.Errorf("informer_stale = %v (present %t), want %v", got, ok, stale)
			}
			if got, ok := byName["informer_behind_resource_versions"]; ok != behindKnown || got != behind {
				t.Errorf("informer_behind_resource_versions = %v (present %t), want %v (present %t)", got, ok, behind, behindKnown)
			}
		}
		check(0, 0, false)

		for _, name := range []string{"a", "b"} {
			if _, err := srv.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		fctx, fcancel := context.WithTimeout(t.Context(), 2*time.Second)
		if err := inf.Fresh(fctx); err == nil {
			t.Fatal("Fresh succeeded before the delayed writes arrived")
		}
		fcancel()
		check(1, 2, true)

		time.Sleep(2 * time.Second)
		synctest.Wait()
		check(1, 0, true) // caught up, but stale until a Fresh call says so
		if err := inf.Fresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		check(0, 0, true)
	})
}
