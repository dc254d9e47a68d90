package crcache

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
)

// A probe's request takes no token, whichever limiter its context would
// wait on; an informer's requests through controller-runtime's ListWatch
// wait on a bucket of their own, the mapper's on another, each of the
// config's QPS and Burst (defaulted as client-go defaults them); a
// config's own RateLimiter stays shared; QPS < 0 means no limiter.
func TestProbeLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newProbeLimiter(&rest.Config{QPS: 1.0 / 1024, Burst: 1})
		start := time.Now()
		wait := func(ctx context.Context) time.Duration {
			if err := l.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}
		informer := context.WithValue(t.Context(), bucketKey{}, l.own())
		probing := context.WithValue(informer, probeKey{}, &probe{})
		var got []time.Duration
		for _, ctx := range []context.Context{probing, probing, probing, informer, t.Context(), probing, informer, t.Context()} {
			got = append(got, wait(ctx))
		}
		// The informer's and the mapper's buckets each had their one
		// token at 0 and the next 1024 s later; the probes took none.
		period := 1024 * time.Second
		want := []time.Duration{0, 0, 0, 0, 0, 0, period, period}
		if len(got) != len(want) {
			t.Fatalf("waits returned at %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("waits returned at %v, want %v", got, want)
			}
		}
	})
	lw := &toolscache.ListWatch{}
	if l := newProbeLimiter(&rest.Config{}); l.qps != rest.DefaultQPS || l.burst != rest.DefaultBurst || l.limited(lw) == toolscache.ListerWatcher(lw) {
		t.Errorf("defaults: QPS %v, Burst %d, want %v, %d and a ListWatch of its own bucket", l.qps, l.burst, rest.DefaultQPS, rest.DefaultBurst)
	}
	if l := newProbeLimiter(&rest.Config{QPS: -1}); l != nil || l.limited(lw) != toolscache.ListerWatcher(lw) {
		t.Errorf("QPS < 0: limiter %v, want none", l)
	}
	shared := flowcontrol.NewFakeAlwaysRateLimiter()
	if l := newProbeLimiter(&rest.Config{RateLimiter: shared}); l.shared != shared || l.own() != shared || l.limited(lw) != toolscache.ListerWatcher(lw) {
		t.Errorf("a config's RateLimiter: %+v, want it shared by every client", l)
	}
}
