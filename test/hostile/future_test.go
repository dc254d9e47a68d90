package hostile

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer"
)

// TestFarFutureResourceVersion: a server that sends a bookmark from the far
// future and then stays quiet. The watch alone cannot tell it from a real
// one (a barrier below it is satisfied at once), but Informer.Fresh asks
// the server: it returns ErrFutureResourceVersion and relists, and the
// cache is back at the server's resource version, equal to it and fresh.
// A WaitForResourceVersion for a version the server never issued errors
// instead of waiting.
func TestFarFutureResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(7)
		srv.setHostile(false)
		for range names / 2 {
			srv.churn(names)
		}
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Name: "future", Source: srv})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
		done := make(chan error, 1)
		go func() { done <- inf.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
		if err := inf.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		future := srv.sendFuture(1_000_000)
		synctest.Wait()
		if got := inf.LastSyncResourceVersion(); got != future {
			t.Fatalf("the cache took the bookmark at %s as %s", future, got)
		}
		if err := inf.Fresh(ctx); !errors.Is(err, informer.ErrFutureResourceVersion) {
			t.Fatalf("Fresh on a cache told a resource version from the future: %v, want ErrFutureResourceVersion", err)
		}

		time.Sleep(time.Minute)
		synctest.Wait()
		if got, want := inf.LastSyncResourceVersion(), srv.current(); got != want {
			t.Errorf("a minute after Fresh relisted the cache is at %s, the server at %s", got, want)
		}
		if got, want := cached(inf), srv.truth(); !maps.Equal(got, want) {
			t.Errorf("cache differs from the server after the relist: %s", diff(got, want))
		}
		if err := inf.Fresh(ctx); err != nil {
			t.Errorf("Fresh after the relist: %v", err)
		}

		n, _ := strconv.ParseUint(srv.current(), 10, 64)
		wctx, wcancel := context.WithTimeout(ctx, time.Hour)
		defer wcancel()
		if err := inf.WaitForResourceVersion(wctx, strconv.FormatUint(n+1, 10)); !errors.Is(err, informer.ErrFutureResourceVersion) {
			t.Errorf("WaitForResourceVersion beyond the server: %v, want ErrFutureResourceVersion", err)
		}
	})
}
