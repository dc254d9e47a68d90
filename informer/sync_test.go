package informer

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/informer/informertest"
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

// WaitForQueued waits for a list the reflector has queued to be applied,
// also when it carries the resource version the cache already had (a
// requested relist): WaitForResourceVersion passes before it is applied.
func TestWaitForQueuedWaitsForAQueuedListAtTheSameResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &informertest.HeldProcessing{}
		e := newEnv(t, Options[*corev1.ConfigMap]{Processing: g})
		e.create(t, "a")
		e.run(t)
		e.waitRV(t)
		rv := e.srv.ResourceVersion()

		g.Hold()
		e.inf.Relist()
		synctest.Wait() // the list is queued; its batch waits at the gate
		if err := e.inf.WaitForResourceVersion(t.Context(), rv); err != nil {
			t.Fatalf("WaitForResourceVersion(%s): %v", rv, err)
		}
		done := make(chan error, 1)
		go func() { done <- e.inf.WaitForQueued(t.Context()) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("WaitForQueued returned (%v) while the relist waited to be applied", err)
		default:
		}

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var ns *NotSyncedError
		if err := e.inf.WaitForQueued(ctx); !errors.As(err, &ns) {
			t.Fatalf("WaitForQueued with an ended context: %v, want a *NotSyncedError", err)
		}

		g.Release()
		if err := <-done; err != nil {
			t.Fatalf("WaitForQueued: %v", err)
		}
		if n := e.inf.fifo.Len(); n != 0 {
			t.Fatalf("WaitForQueued returned with %d items queued", n)
		}
	})
}
