package hostile

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

var compareClientGo = flag.Bool("clientgo", false, "run TestClientGoForcedBehaviour, which measures client-go's informer against the same server (for docs; it asserts nothing)")

// TestClientGoForcedBehaviour puts client-go's SharedIndexInformer through
// TestInformerForcedBehaviour's schedules and logs, per behaviour, the
// busiest virtual minute, when it synced and whether its cache ended equal
// to the server. It is a measurement for docs/operations.md, not a test of
// listwatch: run it with -clientgo.
func TestClientGoForcedBehaviour(t *testing.T) {
	if !*compareClientGo {
		t.Skip("a measurement of client-go; run with -clientgo")
	}
	var rows []string
	for b := behaviour(1); b < numBehaviours; b++ {
		synctest.Test(t, func(t *testing.T) {
			srv := newServer(uint64(b))
			srv.force = b
			for range names / 2 {
				srv.churn(names)
			}
			start := time.Now()
			inf := cache.NewSharedIndexInformer(&cache.ListWatch{
				ListWithContextFunc:  srv.ListWithContext,
				WatchFuncWithContext: srv.WatchWithContext,
			}, &corev1.ConfigMap{}, 0, cache.Indexers{})
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { inf.RunWithContext(ctx); close(done) }()
			var syncedAt time.Duration = -1
			for range 600 {
				time.Sleep(time.Second)
				srv.churn(names)
				if syncedAt < 0 && inf.HasSynced() {
					syncedAt = time.Since(start)
				}
			}
			srv.setHostile(false)
			time.Sleep(behaveFor)
			synctest.Wait()
			got := map[string]string{}
			for _, o := range inf.GetStore().List() {
				if cm, ok := o.(*corev1.ConfigMap); ok {
					got[cm.Name] = cm.ResourceVersion
				}
			}
			cancel()
			<-done
			w := maxPerWindow(srv.history(), time.Minute)
			synced := "never while hostile"
			if syncedAt >= 0 {
				synced = syncedAt.String()
			}
			rows = append(rows, fmt.Sprintf("| %s | %d%s | %s | %t |", b, w.n, runaway(srv), synced, maps.Equal(got, srv.truth())))
		})
	}
	t.Logf("client-go against the forced behaviours:\n| behaviour | busiest minute | synced at | cache equal after |\n%s", strings.Join(rows, "\n"))
}

func runaway(s *server) string {
	if s.ranAway() {
		return " (ran away: 1000 in 1 s)"
	}
	return ""
}
