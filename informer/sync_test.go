package informer

import (
	"context"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
)

// WaitForSync on a synced informer returns nil even when its context has
// already ended: synced wins, every time (a select on both used to pick
// either at random).
func TestWaitForSyncSyncedWinsOverCancelledContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		e.create(t, "a")
		e.run(t)
		e.waitRV(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for i := range 200 {
			if err := e.inf.WaitForSync(ctx); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	})
}
