package informer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/fake"
)

// freshEnv is a fake apiserver, its configmaps' source (wrapped so that a
// test can slip an event into the open watch) and an informer on it,
// running in the current synctest bubble until the test ends.
type freshEnv struct {
	srv *fake.Server
	src *injectingSource
	inf *Informer[*corev1.ConfigMap]
}

func newFreshEnv(t *testing.T, fault *fake.WatchFault) *freshEnv {
	t.Helper()
	srv := fake.NewTestServer(t, fake.Options{})
	if fault != nil {
		if err := srv.InjectWatchFault(*fault); err != nil {
			t.Fatal(err)
		}
	}
	src := &injectingSource{ListerWatcher: srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR}), inject: make(chan watch.Event)}
	inf, err := New(Options[*corev1.ConfigMap]{Name: "fresh", Source: src})
	if err != nil {
		t.Fatal(err)
	}
	return &freshEnv{srv: srv, src: src, inf: inf}
}

// start runs the informer until the test ends and waits until it has synced
// and is idle.
func (e *freshEnv) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := e.inf.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
}

func (e *freshEnv) write(t *testing.T, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	var obj any
	var err error
	if cm.ResourceVersion == "" {
		obj, err = e.srv.Create(t.Context(), cm)
	} else {
		obj, err = e.srv.Update(t.Context(), cm)
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.ConfigMap)
}

func (e *freshEnv) lists() []fake.Call {
	var out []fake.Call
	for _, c := range e.srv.Calls() {
		if c.Verb == fake.VerbList {
			out = append(out, c)
		}
	}
	return out
}

func rvNum(t *testing.T, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resource version %q: %v", rv, err)
	}
	return n
}

func freshCM(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{"v": "0"}}
}

// injectingSource is a source whose open watches also deliver what is sent
// on inject: a server that sends an event of its own making.
type injectingSource struct {
	*fake.ListerWatcher
	inject chan watch.Event
}

func (s *injectingSource) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := s.ListerWatcher.WatchWithContext(ctx, o)
	if err != nil {
		return nil, err
	}
	m := &mergedWatch{inner: w, out: make(chan watch.Event), done: make(chan struct{})}
	go m.run(s.inject)
	return m, nil
}

type mergedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	done  chan struct{}
	once  sync.Once
}

func (m *mergedWatch) ResultChan() <-chan watch.Event { return m.out }
func (m *mergedWatch) Stop()                          { m.once.Do(func() { close(m.done); m.inner.Stop() }) }

func (m *mergedWatch) run(inject <-chan watch.Event) {
	defer close(m.out)
	for {
		var ev watch.Event
		select {
		case e, ok := <-m.inner.ResultChan():
			if !ok {
				return
			}
			ev = e
		case ev = <-inject:
		case <-m.done:
			return
		}
		select {
		case m.out <- ev:
		case <-m.done:
			return
		}
	}
}

// A cache in step: Fresh makes one request, a list of at most one object
// from a quorum read, and returns at once.
func TestFreshInStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFreshEnv(t, nil)
		for i := range 5 {
			e.write(t, freshCM(fmt.Sprintf("c%d", i)))
		}
		e.start(t)
		e.write(t, freshCM("late"))
		synctest.Wait()
		e.srv.ResetCalls()
		start := time.Now()
		if err := e.inf.Fresh(t.Context()); err != nil {
			t.Fatalf("Fresh: %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Fresh took %v on a cache in step", d)
		}
		calls := e.srv.Calls()
		if len(calls) != 1 {
			t.Fatalf("Fresh made %d requests, want 1: %v", len(calls), calls)
		}
		if c := calls[0]; c.Verb != fake.VerbList || c.Options.Limit != 1 || c.Options.ResourceVersion != "" || c.Err != nil ||
			c.ListResourceVersion != e.srv.ResourceVersion() {
			t.Errorf("Fresh's request: %v, want a list with limit 1 from a quorum read at %s", c, e.srv.ResourceVersion())
		}
	})
}

// The property: against a watch that delivers every event 3 s late, under
// churn, every write acknowledged before Fresh was called is in the cache
// once Fresh returns nil.
func TestFreshDelayedWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFreshEnv(t, &fake.WatchFault{Delay: 3 * time.Second})
		e.start(t)

		var (
			mu    sync.Mutex
			acked = map[string]*corev1.ConfigMap{}
		)
		stop := make(chan struct{})
		churned := make(chan struct{})
		go func() {
			defer close(churned)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(70 * time.Millisecond):
				}
				name := fmt.Sprintf("c%d", i%7)
				mu.Lock()
				cm := acked[name]
				mu.Unlock()
				if cm == nil {
					cm = freshCM(name)
				} else {
					cm = cm.DeepCopy()
					cm.Data["v"] = strconv.Itoa(i)
				}
				cm = e.write(t, cm)
				mu.Lock()
				acked[name] = cm
				mu.Unlock()
			}
		}()

		var waited int
		for round := range 15 {
			time.Sleep(time.Duration(100+round*97%400) * time.Millisecond)
			mu.Lock()
			want := map[string]uint64{}
			for name, cm := range acked {
				want[name] = rvNum(t, cm.ResourceVersion)
			}
			mu.Unlock()
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			err := e.inf.Fresh(ctx)
			cancel()
			if err != nil {
				t.Fatalf("round %d: Fresh: %v", round, err)
			}
			if time.Since(start) > 0 {
				waited++
			}
			for name, rv := range want {
				got, ok := e.inf.Reader().GetByKey("ns/" + name)
				if !ok || rvNum(t, got.ResourceVersion) < rv {
					t.Errorf("round %d: Fresh returned but %s, written at resource version %d before the call, is not in the cache (cached: %t)",
						round, name, rv, ok)
				}
			}
		}
		close(stop)
		<-churned
		if waited == 0 {
			t.Error("Fresh never waited: the delayed watch did not put the cache behind")
		}
	})
}

// A failing freshness request is an error, never fresh.
func TestFreshRequestFails(t *testing.T) {
	for _, c := range []struct {
		name string
		kind fake.FailureKind
		is   func(error) bool
	}{
		{"403", fake.Forbidden, apierrors.IsForbidden},
		{"429", fake.TooManyRequests, apierrors.IsTooManyRequests},
		{"500", fake.InternalError, apierrors.IsInternalError},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newFreshEnv(t, nil)
				e.write(t, freshCM("a"))
				e.start(t)
				if err := e.srv.FailNext(fake.Failure{Verbs: fake.VerbList, Times: 1, Kind: c.kind}); err != nil {
					t.Fatal(err)
				}
				err := e.inf.Fresh(t.Context())
				if err == nil || !c.is(err) {
					t.Fatalf("Fresh with the list failing: %v, want the server's error", err)
				}
				// The cache was in step all along: the next call says so.
				if err := e.inf.Fresh(t.Context()); err != nil {
					t.Fatalf("Fresh after the failure: %v", err)
				}
			})
		})
	}
}

// A list without a resource version (client-go's fake clientset) cannot
// tell freshness.
func TestFreshNoServerResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, err := New(Options[*corev1.ConfigMap]{Name: "fresh", Source: noRVSource{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.Fresh(t.Context()); !errors.Is(err, ErrFreshnessUnknown) {
			t.Fatalf("Fresh against a list without a resource version: %v, want ErrFreshnessUnknown", err)
		}
	})
}

// noRVSource answers every list with an empty list without a resource
// version; it is never watched.
type noRVSource struct{}

func (noRVSource) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return &corev1.ConfigMapList{}, nil
}

func (noRVSource) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("not watched")
}

// A cache told a resource version from the far future (a bogus bookmark on
// a quiet watch): WaitForResourceVersion below it cannot tell, but Fresh
// asks the server, says so, and relists; afterwards the cache is fresh
// again.
func TestFreshFutureResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFreshEnv(t, nil)
		e.write(t, freshCM("a"))
		e.start(t)
		e.write(t, freshCM("b"))
		synctest.Wait()
		server := rvNum(t, e.srv.ResourceVersion())
		future := strconv.FormatUint(server+1_000_000, 10)
		e.src.inject <- watch.Event{Type: watch.Bookmark, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: future}}}
		synctest.Wait()
		if got := e.inf.LastSyncResourceVersion(); got != future {
			t.Fatalf("after a bookmark at %s the cache is at %s", future, got)
		}

		e.srv.ResetCalls()
		err := e.inf.Fresh(t.Context())
		if !errors.Is(err, ErrFutureResourceVersion) {
			t.Fatalf("Fresh on a cache beyond the server: %v, want ErrFutureResourceVersion", err)
		}
		t.Logf("Fresh: %v", err)

		time.Sleep(time.Minute)
		synctest.Wait()
		if got := e.inf.LastSyncResourceVersion(); got != e.srv.ResourceVersion() {
			t.Errorf("a minute after Fresh found the cache beyond the server it is at %s, the server at %s (lists: %v)",
				got, e.srv.ResourceVersion(), e.lists())
		}
		relisted := false
		for _, c := range e.srv.Calls()[1:] {
			streamed := c.Options.SendInitialEvents != nil && *c.Options.SendInitialEvents
			if (c.Verb == fake.VerbList || streamed) && c.Options.ResourceVersion == "" && c.Err == nil {
				relisted = true
			}
		}
		if !relisted {
			t.Errorf("no relist from a quorum read after Fresh: %v", e.srv.Calls())
		}
		if err := fake.Converged(e.srv, fake.LWOptions{Resource: fake.ConfigMaps().GVR}, e.inf.Reader().List()); err != nil {
			t.Error(err)
		}
		if err := e.inf.Fresh(t.Context()); err != nil {
			t.Errorf("Fresh after the relist: %v", err)
		}
	})
}

// WaitForResourceVersion for a version the server has not issued: after a
// second it asks the server once and returns ErrFutureResourceVersion,
// rather than waiting until ctx ends. A wait that ends sooner, or whose
// version the server did issue, makes no request or goes on waiting.
func TestWaitForFutureResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFreshEnv(t, &fake.WatchFault{Delay: 5 * time.Second})
		e.start(t)
		server := rvNum(t, e.srv.ResourceVersion())
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()

		e.srv.ResetCalls()
		start := time.Now()
		err := e.inf.WaitForResourceVersion(ctx, strconv.FormatUint(server+5, 10))
		if !errors.Is(err, ErrFutureResourceVersion) {
			t.Fatalf("WaitForResourceVersion(server+5): %v, want ErrFutureResourceVersion", err)
		}
		if d := time.Since(start); d != futureCheckAfter {
			t.Errorf("it returned after %v, want %v", d, futureCheckAfter)
		}
		if n := len(e.lists()); n != 1 {
			t.Errorf("%d lists, want 1: %v", n, e.srv.Calls())
		}

		// A write acknowledged but delivered 5 s late: the check finds it
		// issued, and the wait goes on until it arrives.
		e.srv.ResetCalls()
		cm := e.write(t, freshCM("a"))
		start = time.Now()
		if err := e.inf.WaitForResourceVersion(ctx, cm.ResourceVersion); err != nil {
			t.Fatalf("WaitForResourceVersion of a write: %v", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("the delayed write was waited for %v, want 5s", d)
		}
		if n := len(e.lists()); n != 1 {
			t.Errorf("%d lists, want 1: %v", n, e.srv.Calls())
		}

		// A wait shorter than a second makes no request.
		e.srv.ClearFaults()
		synctest.Wait()
		e.inf.Relist() // a new watch, without the delay
		time.Sleep(time.Second)
		synctest.Wait()
		e.srv.ResetCalls()
		cm = e.write(t, freshCM("b"))
		if err := e.inf.WaitForResourceVersion(ctx, cm.ResourceVersion); err != nil {
			t.Fatalf("WaitForResourceVersion of a write: %v", err)
		}
		if n := len(e.lists()); n != 0 {
			t.Errorf("a wait shorter than a second made %d lists: %v", n, e.srv.Calls())
		}
	})
}
