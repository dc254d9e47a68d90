package cache

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// runCompat runs inf until the test ends, without waiting for it to sync.
func runCompat(t *testing.T, inf cache.SharedIndexInformer) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// cache.ShutDownEventHandler removes a handler and returns once it has
// stopped: a call in progress has finished and no other will come, so the
// caller may then release what the handler uses (here: close the channel
// it sends on).
func TestCompatShutDownEventHandlerWaitsForTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		inf := newCompat(srv)
		runSII(t, inf)
		sent := make(chan string, 10)
		entered, release := make(chan struct{}), make(chan struct{})
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if obj.(*corev1.ConfigMap).Name == "a" {
					close(entered)
					<-release
				}
				sent <- obj.(*corev1.ConfigMap).Name // panics once sent is closed
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		<-entered
		srv.Create(t.Context(), objects.ConfigMap("ns", "b", objects.Data("v", "0")))
		synctest.Wait()
		var shutErr error
		shut := make(chan struct{})
		go func() { defer close(shut); shutErr = cache.ShutDownEventHandler(inf, reg) }()
		synctest.Wait()
		select {
		case <-shut:
			close(release)
			t.Fatalf("ShutDownEventHandler returned while the handler was still running (err %v)", shutErr)
		default:
		}
		close(release)
		<-shut
		if shutErr != nil {
			t.Fatal(shutErr)
		}
		close(sent)
		srv.Create(t.Context(), objects.ConfigMap("ns", "c", objects.Data("v", "0")))
		synctest.Wait()
		var got []string
		for name := range sent {
			got = append(got, name)
		}
		// b was pending when the handler was removed: it is dropped.
		if !slices.Equal(got, []string{"a"}) {
			t.Fatalf("handler sent %q, want only a", got)
		}
	})
}

// cache.ShutDownEventHandler returns in every lifecycle: informer never
// started, handler added after Run, handler added before Run; and a
// registration's ShutdownChan closes when the informer stops.
func TestCompatShutDownEventHandlerLifecycles(t *testing.T) {
	noop := cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}}
	shutDown := func(t *testing.T, inf cache.SharedIndexInformer, reg cache.ResourceEventHandlerRegistration) {
		t.Helper()
		if err := cache.ShutDownEventHandler(inf, reg); err != nil {
			t.Fatal(err)
		}
		// Idempotent, as RemoveEventHandler.
		if err := cache.ShutDownEventHandler(inf, reg); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("never started", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			inf := newCompat(fake.NewTestServer(t, fake.Options{}))
			reg, _ := inf.AddEventHandler(noop)
			shutDown(t, inf, reg)
			// Running it afterwards does not start the removed handler.
			runSII(t, inf)
		})
	})
	t.Run("started then added", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := fake.NewTestServer(t, fake.Options{})
			srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
			inf := newCompat(srv)
			runSII(t, inf)
			reg, _ := inf.AddEventHandler(noop)
			shutDown(t, inf, reg)
		})
	})
	t.Run("added then started", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := fake.NewTestServer(t, fake.Options{})
			srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
			inf := newCompat(srv)
			reg, _ := inf.AddEventHandler(noop)
			runSII(t, inf)
			shutDown(t, inf, reg)
		})
	})
	t.Run("informer stops", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			inf := newCompat(fake.NewTestServer(t, fake.Options{}))
			reg, _ := inf.AddEventHandler(noop)
			stop := runCompat(t, inf)
			synctest.Wait()
			ch := reg.(interface{ ShutdownChan() <-chan struct{} }).ShutdownChan()
			select {
			case <-ch:
				t.Fatal("ShutdownChan closed while the informer runs and the handler is registered")
			default:
			}
			stop()
			<-ch
		})
	})
}
