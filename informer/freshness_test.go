package informer

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/reflector"
)

// newBoundEnv is newFreshEnv with Options.FreshnessBound set.
func newBoundEnv(t *testing.T, fault *fake.WatchFault, bound time.Duration) *freshEnv {
	t.Helper()
	e := newFreshEnv(t, fault)
	e.inf.opts.FreshnessBound = bound
	return e
}

// checkStale fails unless every view of the informer agrees on whether
// it is stale, and why.
func checkStale(t *testing.T, inf *Informer[*corev1.ConfigMap], stale bool, reason string) Freshness {
	t.Helper()
	f := inf.Freshness()
	if f.Stale != stale || f.Reason != reason {
		t.Errorf("Freshness: stale %t (%q), want %t (%q): %+v", f.Stale, f.Reason, stale, reason, f)
	}
	snap := inf.Snapshot()
	if snap.Freshness != f {
		t.Errorf("Snapshot's Freshness %+v, Freshness() %+v", snap.Freshness, f)
	}
	st := inf.Status()
	if got := errors.Is(st.LastError, ErrStale); got != stale {
		t.Errorf("Status: last error %v (%s), want one wrapping ErrStale: %t", st.LastError, st.Reason, stale)
	}
	if stale && snap.Healthy() {
		t.Error("a stale informer's Snapshot is Healthy")
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Contains(string(b), `"stale":true`); got != stale {
		t.Errorf("Snapshot's JSON says stale: %t, want %t: %s", got, stale, b)
	}
	return f
}

// A Fresh whose wait outlasts the bound marks the informer stale, in
// Freshness, Snapshot and Status; the call that then succeeds clears it,
// and a call whose ctx ends first leaves it for the next call to clear.
func TestFreshnessBoundStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newBoundEnv(t, &fake.WatchFault{Delay: 3 * time.Second}, time.Second)
		e.write(t, freshCM("a"))
		e.start(t)
		if err := e.inf.Fresh(t.Context()); err != nil {
			t.Fatalf("Fresh in step: %v", err)
		}
		f := checkStale(t, e.inf, false, "")
		if f.LastFresh.IsZero() || f.BehindBy != 0 || f.ServerResourceVersion != e.srv.ResourceVersion() {
			t.Errorf("after a Fresh in step: %+v, server at %s", f, e.srv.ResourceVersion())
		}
		firstFresh := f.LastFresh

		// The watch delivers the write 3 s late: past the 1 s bound the
		// informer is stale, and the call, still waiting, clears it when
		// the write arrives.
		before := rvNum(t, e.inf.LastSyncResourceVersion())
		e.write(t, freshCM("b"))
		done := make(chan error, 1)
		go func() { done <- e.inf.Fresh(t.Context()) }()
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		checkStale(t, e.inf, false, "")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		f = checkStale(t, e.inf, true, StaleBehind)
		if want := rvNum(t, e.srv.ResourceVersion()) - before; f.BehindBy != want {
			t.Errorf("BehindBy %d, want %d", f.BehindBy, want)
		}
		if st := e.inf.Status(); st.Reason != reflector.ReasonOther || !strings.Contains(st.LastError.Error(), "within 1s") {
			t.Errorf("Status of a stale informer: %s: %v", st.Reason, st.LastError)
		}
		if err := <-done; err != nil {
			t.Fatalf("Fresh once the write arrived: %v", err)
		}
		f = checkStale(t, e.inf, false, "")
		if !f.LastFresh.After(firstFresh) || f.BehindBy != 0 {
			t.Errorf("after the late success: %+v", f)
		}

		// A call whose ctx ends after the bound but before the cache
		// catches up returns an error wrapping ErrStale; the mark stays
		// once the cache has caught up, until a call succeeds.
		e.write(t, freshCM("c"))
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		err := e.inf.Fresh(ctx)
		cancel()
		var nse *NotSyncedError
		if !errors.As(err, &nse) || !errors.Is(err, ErrStale) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Fresh that ran out of time past the bound: %v, want a NotSyncedError wrapping ErrStale", err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		f = checkStale(t, e.inf, true, StaleBehind)
		if f.BehindBy != 0 {
			t.Errorf("the cache caught up, yet BehindBy is %d", f.BehindBy)
		}
		if err := e.inf.Fresh(t.Context()); err != nil {
			t.Fatalf("Fresh in step again: %v", err)
		}
		checkStale(t, e.inf, false, "")

		// A call whose ctx ends before the bound marks nothing.
		e.write(t, freshCM("d"))
		ctx, cancel = context.WithTimeout(t.Context(), 500*time.Millisecond)
		if err := e.inf.Fresh(ctx); err == nil || errors.Is(err, ErrStale) {
			t.Errorf("Fresh that ran out of time within the bound: %v", err)
		}
		cancel()
		checkStale(t, e.inf, false, "")
		if f := e.inf.Freshness(); f.BehindBy == 0 {
			t.Errorf("BehindBy 0 with a write on its way: %+v", f)
		}
	})
}

// A failing freshness request neither marks nor clears.
func TestFreshnessBoundRequestFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newBoundEnv(t, &fake.WatchFault{Delay: 3 * time.Second}, time.Second)
		e.start(t)
		e.write(t, freshCM("a"))
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		if err := e.inf.Fresh(ctx); !errors.Is(err, ErrStale) {
			t.Fatalf("Fresh: %v, want ErrStale", err)
		}
		cancel()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if err := e.srv.FailNext(fake.Failure{Verbs: fake.VerbList, Kind: fake.Forbidden, Times: 1}); err != nil {
			t.Fatal(err)
		}
		if err := e.inf.Fresh(t.Context()); err == nil {
			t.Fatal("Fresh succeeded through a 403")
		}
		checkStale(t, e.inf, true, StaleBehind)
		if err := e.inf.Fresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		checkStale(t, e.inf, false, "")
	})
}

// A cache beyond the server's resource version is stale until the
// relist Fresh asked for has brought it back and a Fresh succeeds.
func TestFreshnessBoundFutureResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newBoundEnv(t, nil, time.Second)
		e.write(t, freshCM("a"))
		e.start(t)
		future := strconv.FormatUint(rvNum(t, e.srv.ResourceVersion())+1000, 10)
		e.src.inject <- watch.Event{Type: watch.Bookmark, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: future}}}
		synctest.Wait()
		if err := e.inf.Fresh(t.Context()); !errors.Is(err, ErrFutureResourceVersion) {
			t.Fatalf("Fresh: %v, want ErrFutureResourceVersion", err)
		}
		checkStale(t, e.inf, true, StaleFutureResourceVersion)
		if st := e.inf.Status(); !errors.Is(st.LastError, ErrFutureResourceVersion) {
			t.Errorf("Status: %v", st.LastError)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := e.inf.Fresh(t.Context()); err != nil {
			t.Fatalf("Fresh after the relist: %v", err)
		}
		checkStale(t, e.inf, false, "")
	})
}

// Without a bound Fresh never marks the informer stale, however long it
// waits, but still says how far behind the cache is.
func TestFreshnessNoBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFreshEnv(t, &fake.WatchFault{Delay: 3 * time.Second})
		e.start(t)
		if f := e.inf.Freshness(); f != (Freshness{}) {
			t.Errorf("Freshness before any Fresh call: %+v", f)
		}
		e.write(t, freshCM("a"))
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		if err := e.inf.Fresh(ctx); err == nil || errors.Is(err, ErrStale) {
			t.Errorf("Fresh: %v", err)
		}
		cancel()
		f := checkStale(t, e.inf, false, "")
		if f.BehindBy == 0 || !f.LastFresh.IsZero() {
			t.Errorf("Freshness after a Fresh that ran out of time: %+v", f)
		}
		if err := e.inf.Fresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		if f := checkStale(t, e.inf, false, ""); f.BehindBy != 0 || f.LastFresh.IsZero() {
			t.Errorf("Freshness after a Fresh: %+v", f)
		}
	})
}
