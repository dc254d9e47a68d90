package controllertest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/reconciler"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
)

// harness is everything a controller test needs: a fake apiserver, an
// informer on it, and the controller under test, all running inside the
// test's synctest bubble and stopped when the test ends.
type harness struct {
	srv *fake.Server
	inf *informer.Informer[*corev1.ConfigMap]
	ctl *reconciler.Controller
}

func start(t *testing.T) *harness {
	// NewTestServer closes leftover watches when the test ends, so goleak
	// (or synctest's own check) sees no stray goroutine.
	srv := fake.NewTestServer(t, fake.Options{})
	inf, err := informer.New(informer.Options[*corev1.ConfigMap]{
		Source: srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ctl, err := reconciler.New(ctx, reconciler.Options{Informer: inf, Writer: &reconciler.FakeWriter{Server: srv}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = inf.Run(ctx) })
	wg.Go(func() { ctl.Run(ctx, 2) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &harness{srv: srv, inf: inf, ctl: ctl}
}

// settle waits until the cache reflects every write made so far and every
// goroutine in the bubble is idle: then the controller has done all it
// will do. No sleeps: WaitForResourceVersion is a freshness barrier and
// synctest.Wait returns when the bubble is quiet.
func (h *harness) settle(t *testing.T) {
	t.Helper()
	for range 10 { // the controller's own writes start new rounds
		rv := h.srv.ResourceVersion()
		if err := h.inf.WaitForResourceVersion(t.Context(), rv); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if h.srv.ResourceVersion() == rv {
			return
		}
	}
	t.Fatal("the controller keeps writing")
}

func source(name string, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{reconciler.SourceLabel: "true"}},
		Data:       map[string]string{"v": data},
	}
}

// The basic shape: make a change on the fake server, settle, assert on
// what the controller wrote (through the server, or the informer's cache).
func TestMirrorIsCreatedUpdatedAndDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		created, _ := h.srv.Create(t.Context(), source("app", "1"))
		h.settle(t)
		mirror, err := h.srv.Get(t.Context(), fake.ConfigMaps().GVR, "default", "app-mirror")
		if err != nil || mirror.(*corev1.ConfigMap).Data["v"] != "1" {
			t.Fatalf("mirror = %v, %v", mirror, err)
		}

		updated := created.(*corev1.ConfigMap).DeepCopy()
		updated.Data["v"] = "2"
		h.srv.Update(t.Context(), updated)
		h.settle(t)
		if m, _ := h.inf.Reader().Namespace("default").Get("app-mirror"); m.Data["v"] != "2" {
			t.Fatalf("mirror data = %v, want v=2", m.Data)
		}

		current, _ := h.srv.Get(t.Context(), fake.ConfigMaps().GVR, "default", "app")
		h.srv.Delete(t.Context(), current)
		h.settle(t)
		if _, err := h.srv.Get(t.Context(), fake.ConfigMaps().GVR, "default", "app-mirror"); err == nil {
			t.Fatal("mirror survived its source")
		}
	})
}

// Faults on demand: the server goes down, a deletion happens meanwhile, and
// the history is compacted, so the informer must relist (410) and discover
// the deletion. Converged then proves the cache equals the server, with a
// readable diff if it does not.
func TestControllerRecoversFromOutageAndCompaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		a, _ := h.srv.Create(t.Context(), source("a", "1"))
		h.srv.Create(t.Context(), source("b", "1"))
		h.settle(t)

		h.srv.Down() // open watches close; lists and watches are refused
		h.srv.Delete(t.Context(), a)
		h.srv.Compact(h.srv.ResourceVersion()) // the informer's RV is gone now
		time.Sleep(5 * time.Second)            // virtual time: the informer backs off
		h.srv.Up()
		h.settle(t)

		if err := fake.Converged(h.srv, fake.LWOptions{Resource: fake.ConfigMaps().GVR}, h.inf.Reader().List()); err != nil {
			t.Fatal(err)
		}
		if bad := reconciler.Check(h.inf.Reader()); len(bad) != 0 {
			t.Fatalf("controller did not converge: %v", bad)
		}
		if st := h.inf.Status(); st.LastSyncResourceVersion != h.srv.ResourceVersion() {
			t.Fatalf("informer at %s, server at %s", st.LastSyncResourceVersion, h.srv.ResourceVersion())
		}
	})
}

// Failing requests: the fake can fail the next calls with real API errors
// (403, 404, 410, 429 with Retry-After, 500, connection refused), and
// WaitForSync reports why the informer is stuck.
func TestForbiddenIsVisible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		srv.FailNext(fake.Failure{Kind: fake.Forbidden, Times: 100})
		inf, _ := informer.New(informer.Options[*corev1.ConfigMap]{
			Source: srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR}),
		})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		defer func() { cancel(); <-done }()

		waitCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		err := inf.WaitForSync(waitCtx)
		if err == nil {
			t.Fatal("synced despite 403s")
		}
		t.Log(err) // "... in phase backoff: last error (Forbidden, 1 failures in a row): configmaps is forbidden: ..."
		srv.ClearFaults()
	})
}
