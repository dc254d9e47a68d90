package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

var cmGVR = fake.ConfigMaps().GVR

// cmEvents records typed ConfigMap notifications as strings.
type cmEvents = informertest.Recorder[*corev1.ConfigMap]

// env is a fake apiserver and an informer on its configmaps, running in the
// current synctest bubble until the test ends.
type env struct {
	srv *fake.Server
	inf *Informer[*corev1.ConfigMap]
}

func newEnv(t *testing.T, opts Options[*corev1.ConfigMap]) *env {
	srv := fake.NewTestServer(t, fake.Options{})
	opts.Source = srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})
	inf, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, inf: inf}
}

func (e *env) run(t *testing.T) { runInformer(t, e.inf) }

// runInformer runs inf until the test ends (inside a synctest bubble, the
// bubble's end) and returns the context it runs under.
func runInformer(t *testing.T, inf *Informer[*corev1.ConfigMap]) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ctx
}

// runSynced runs inf (runInformer) with h as a handler, if not nil, and
// waits until it has synced and the handlers have been called.
func runSynced(t *testing.T, inf *Informer[*corev1.ConfigMap], h Handler[*corev1.ConfigMap]) {
	t.Helper()
	if h != nil {
		if _, err := inf.AddHandler(h, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := inf.WaitForSync(runInformer(t, inf)); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
}

func (e *env) create(t *testing.T, name string) *corev1.ConfigMap {
	obj, err := e.srv.Create(t.Context(), objects.ConfigMap("ns", name, objects.Data("v", "0")))
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.ConfigMap)
}

func (e *env) update(t *testing.T, c *corev1.ConfigMap) *corev1.ConfigMap {
	c = c.DeepCopy()
	c.Data["v"] += "1"
	obj, err := e.srv.Update(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.ConfigMap)
}

func (e *env) converged(t *testing.T) {
	t.Helper()
	if err := fake.Converged(e.srv, fake.LWOptions{Resource: cmGVR}, e.inf.Reader().List()); err != nil {
		t.Fatal(err)
	}
}

func (e *env) waitRV(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := e.inf.WaitForResourceVersion(ctx, e.srv.ResourceVersion()); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
}

// The exact sequence a handler sees: the initial list, then live changes.
func TestInformerEventSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		a := e.create(t, "a")
		e.create(t, "b")
		h := &cmEvents{}
		reg, err := e.inf.AddHandler(h, HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.run(t)
		if err := e.inf.WaitForSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !reg.HasSynced() {
			t.Fatal("registration not synced after the informer synced and the handler drained")
		}
		a2 := e.update(t, a)
		e.waitRV(t)
		if _, err := e.srv.Delete(t.Context(), a2); err != nil {
			t.Fatal(err)
		}
		e.waitRV(t)
		// The server stamps a deletion with a new resource version.
		h.ExpectExactly(t, "add a@1 initial=true", "add b@2 initial=true", "update a@1->3", "delete a@4 unknown=false")
		e.converged(t)
	})
}

// A deletion missed while disconnected, found by the relist after a 410,
// reaches the handler as a delete whose final state is unknown, carrying
// the last state the cache had.
func TestInformerRelistFindsDeletions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		a, b := e.create(t, "a"), e.create(t, "b")
		h := &cmEvents{}
		if _, err := e.inf.AddHandler(h, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		e.run(t)
		e.waitRV(t)
		h.Take()

		e.srv.Down()
		if _, err := e.srv.Delete(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		b2 := e.update(t, b)
		if err := e.srv.Compact(e.srv.ResourceVersion()); err != nil {
			t.Fatal(err)
		}
		e.srv.Up()
		e.waitRV(t)
		want := []string{"delete a@1 unknown=true", fmt.Sprintf("update b@2->%s", b2.ResourceVersion)}
		got := h.Take()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("\ngot  %q\nwant %q", got, want)
		}
		e.converged(t)
	})
}

// A handler added after the informer synced is first handed the cache, as
// initial adds, then live changes; removing it stops its notifications.
func TestInformerLateHandlerAndRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		e.create(t, "a")
		e.run(t)
		e.waitRV(t)
		h := &cmEvents{}
		reg, err := e.inf.AddHandler(h, HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := e.create(t, "c")
		e.waitRV(t)
		if !reg.HasSynced() {
			t.Fatal("late registration not synced after its replay")
		}
		h.ExpectExactly(t, "add a@1 initial=true", "add c@2 initial=false")
		reg.Remove()
		reg.Remove()
		e.update(t, c)
		e.waitRV(t)
		h.ExpectExactly(t) // removed
	})
}

// Resync replays the cache only to handlers that asked for it.
func TestInformerResyncPerHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		e.create(t, "a")
		resyncing, quiet := &cmEvents{}, &cmEvents{}
		if _, err := e.inf.AddHandler(resyncing, HandlerOptions{ResyncPeriod: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.inf.AddHandler(quiet, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		e.run(t)
		e.waitRV(t)
		resyncing.Take()
		quiet.Take()
		time.Sleep(65 * time.Second)
		synctest.Wait()
		resyncing.ExpectExactly(t, "update a@1->1", "update a@1->1")
		quiet.ExpectExactly(t)
	})
}

// WaitForSync says why it failed: here, the list is forbidden.
func TestInformerWaitForSyncSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		if err := e.srv.FailNext(fake.Failure{Kind: fake.Forbidden, Times: 1000}); err != nil {
			t.Fatal(err)
		}
		e.run(t)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		err := e.inf.WaitForSync(ctx)
		var ns *NotSyncedError
		if !errors.As(err, &ns) || !apierrors.IsForbidden(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a NotSyncedError wrapping a 403 and the deadline", err)
		}
		t.Log(err)
		e.srv.ClearFaults()
	})
}

// A slow handler delays neither the cache nor the other handlers.
func TestInformerSlowHandlerDelaysNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		gate := make(chan struct{})
		slow := HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { <-gate }}
		fast := &cmEvents{}
		regSlow, _ := e.inf.AddHandler(slow, HandlerOptions{})
		if _, err := e.inf.AddHandler(fast, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		e.run(t)
		for i := range 100 {
			e.create(t, fmt.Sprint("o", i))
		}
		e.waitRV(t)
		if n := len(fast.Take()); n != 100 {
			t.Fatalf("fast handler got %d adds, want 100", n)
		}
		if n := e.inf.Reader().Len(); n != 100 {
			t.Fatalf("cache has %d objects, want 100", n)
		}
		if st := regSlow.Stats(); st.Pending != 99 {
			t.Fatalf("slow handler stats = %+v, want 99 pending", st)
		}
		close(gate)
	})
}

// An empty first list syncs too (nothing to pop must not mean never synced).
func TestInformerEmptyInitialList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		reg, _ := e.inf.AddHandler(&cmEvents{}, HandlerOptions{})
		e.run(t)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := e.inf.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !reg.HasSynced() {
			t.Fatal("registration not synced on an empty list")
		}
	})
}
