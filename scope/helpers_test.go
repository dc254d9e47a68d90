package scope_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/scope"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a handler that records every call, in order, as
// "add ns/name", "update ns/name", "delete ns/name" or
// "delete? ns/name" (finalStateUnknown).
type recorder struct {
	mu    sync.Mutex
	calls []string
	// changed is closed and replaced by each call; nil before the first
	// wait.
	changed chan struct{}
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// await returns once ok holds for the calls recorded since the last take
// (checked at once and after each call), or fails the test when ctx ends.
func (r *recorder) await(t *testing.T, ctx context.Context, ok func(calls []string) bool) {
	t.Helper()
	for {
		r.mu.Lock()
		done := ok(r.calls)
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		n := len(r.calls)
		r.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for the handler's calls (%d so far): %v", n, ctx.Err())
		}
	}
}

// atLeast returns a condition for await: n calls or more.
func atLeast(n int) func([]string) bool { return func(c []string) bool { return len(c) >= n } }

func (r *recorder) handler() informer.Handler[*corev1.ConfigMap] {
	return informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { r.add("add " + key(cm)) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { r.add("update " + key(cm)) },
		DeleteFunc: func(cm *corev1.ConfigMap, unknown bool) {
			if unknown {
				r.add("delete? " + key(cm))
				return
			}
			r.add("delete " + key(cm))
		},
	}
}

// take returns the calls recorded since the last take, sorted (the order
// across keys is the informer's, within a relist not the server's).
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	slices.Sort(out)
	return out
}

func key(cm *corev1.ConfigMap) string { return cm.Namespace + "/" + cm.Name }

// prefixed returns "<verb> <key>" for each key, sorted.
func prefixed(verb string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = verb + " " + k
	}
	slices.Sort(out)
	return out
}

// harness is an informer over a scope.Source on a fake server, with a
// recording handler.
type harness struct {
	t   *testing.T
	srv *fake.Server
	src *scope.Source
	inf *informer.Informer[*corev1.ConfigMap]
	rec *recorder
	// stop ends the informer and waits for it.
	stop func()
}

// namespaces returns n0 … n(count-1) from first.
func namespaces(first, count int) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = fmt.Sprintf("n%d", first+i)
	}
	return out
}

// seed creates per ConfigMaps in each namespace, labelled tier=even or
// tier=odd by their index, and returns their keys.
func seed(t *testing.T, srv *fake.Server, nss []string, per int) []string {
	t.Helper()
	var keys []string
	for _, ns := range nss {
		for i := range per {
			tier := map[bool]string{true: "even", false: "odd"}[i%2 == 0]
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"tier": tier}}}
			if _, err := srv.Create(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, ns+"/"+cm.Name)
		}
	}
	return keys
}

// inner is the per-namespace source of ConfigMaps on srv, through wrap
// when set.
func inner(srv *fake.Server, wrap func(ns string, lw cache.ListerWatcherWithContext) cache.ListerWatcherWithContext) func(string) cache.ListerWatcherWithContext {
	return func(ns string) cache.ListerWatcherWithContext {
		lw := cache.ListerWatcherWithContext(srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR, Namespace: ns}))
		if wrap != nil {
			return wrap(ns, lw)
		}
		return lw
	}
}

// start runs an informer of sc over srv (through wrap) and waits for its
// sync; the recorder's first calls are the initial adds.
func start(t *testing.T, srv *fake.Server, sc scope.Scope, wrap func(string, cache.ListerWatcherWithContext) cache.ListerWatcherWithContext) *harness {
	t.Helper()
	h := startWith(t, inner(srv, wrap), sc)
	h.srv = srv
	return h
}

// startWith runs an informer of sc over inner and waits for its sync.
func startWith(t *testing.T, inner func(string) cache.ListerWatcherWithContext, sc scope.Scope) *harness {
	t.Helper()
	src, inf := attached(t, inner, sc)
	rec := &recorder{}
	if _, err := inf.AddHandler(rec.handler(), informer.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	h := &harness{t: t, src: src, inf: inf, rec: rec, stop: func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}}
	if err := inf.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return h
}

// attached returns a source of sc over inner and the informer it is
// attached to, not running.
func attached(t *testing.T, inner func(string) cache.ListerWatcherWithContext, sc scope.Scope) (*scope.Source, *informer.Informer[*corev1.ConfigMap]) {
	t.Helper()
	src, err := scope.NewSource(t.Context(), scope.SourceOptions{Inner: inner, Scope: sc})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	scope.Attach(src, inf)
	return src, inf
}

// cached returns the informer's cache as key → resource version.
func cached(inf *informer.Informer[*corev1.ConfigMap]) map[string]string {
	out := map[string]string{}
	for _, cm := range inf.Reader().List() {
		out[key(cm)] = cm.ResourceVersion
	}
	return out
}

// fresh returns what a fresh informer of sc over srv caches, once synced
// to the server's current resource version.
func fresh(t *testing.T, srv *fake.Server, sc scope.Scope) map[string]string {
	t.Helper()
	h := start(t, srv, sc, nil)
	defer h.stop()
	if err := h.inf.WaitForResourceVersion(t.Context(), srv.ResourceVersion()); err != nil {
		t.Fatal(err)
	}
	return cached(h.inf)
}

// settle waits until the informer has applied every write of the server
// and every handler call it made was delivered.
func (h *harness) settle() {
	h.t.Helper()
	if err := h.inf.WaitForResourceVersion(h.t.Context(), h.srv.ResourceVersion()); err != nil {
		h.t.Fatal(err)
	}
	if err := h.inf.WaitForQueued(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
	synctest.Wait()
}

// lists returns the list calls the server received since the last
// ResetCalls, as "ns=… rv=… match=… labels=…", and resets them; watches
// counts the watch calls.
func lists(srv *fake.Server) (out []string, watches int) {
	for _, c := range srv.Calls() {
		if c.Verb != fake.VerbList {
			watches++
			continue
		}
		out = append(out, fmt.Sprintf("ns=%s rv=%s match=%s labels=%s", c.Namespace, c.Options.ResourceVersion, c.Options.ResourceVersionMatch, c.Options.LabelSelector))
	}
	srv.ResetCalls()
	slices.Sort(out)
	return out, watches
}

// keysIn returns the keys of keys in namespaces nss, sorted.
func keysIn(keys []string, nss ...string) []string {
	var out []string
	for _, k := range keys {
		for _, ns := range nss {
			if len(k) > len(ns) && k[:len(ns)+1] == ns+"/" {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// forbidden wraps a lister-watcher whose lists and watches fail with 403.
type forbidden struct {
	cache.ListerWatcherWithContext
	ns string
}

func (f forbidden) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, forbiddenErr(f.ns)
}

func (f forbidden) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, forbiddenErr(f.ns)
}

func forbiddenErr(ns string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "",
		fmt.Errorf("User \"operator\" cannot list resource \"configmaps\" in API group \"\" in the namespace %q", ns))
}

// all returns every call recorded since the last take, in order.
func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// replay applies calls in order to an empty cache and returns its keys,
// sorted; a call that changes nothing (an add of a cached key, an update
// or delete of one not cached) fails the test.
func replay(t *testing.T, calls []string) []string {
	t.Helper()
	keys, err := replayed(calls)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// replayed is replay, with an error for a call that changes nothing.
func replayed(calls []string) ([]string, error) {
	cached := map[string]bool{}
	for _, c := range calls {
		verb, k, _ := strings.Cut(c, " ")
		switch verb {
		case "add":
			if cached[k] {
				return nil, fmt.Errorf("%s: already cached", c)
			}
			cached[k] = true
		case "update", "delete", "delete?":
			if !cached[k] {
				return nil, fmt.Errorf("%s: not cached", c)
			}
			if verb != "update" {
				delete(cached, k)
			}
		}
	}
	return slices.Sorted(maps.Keys(cached)), nil
}

// takeInOrder returns the calls recorded since the last take, in the
// order they were made.
func (r *recorder) takeInOrder() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}
