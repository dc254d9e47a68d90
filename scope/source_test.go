package scope_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/scope"
)

// TestGainListsOnlyTheNewNamespaces is the goal case in small: an informer
// over 4 namespaces of 25 ConfigMaps (a fifth namespace is never in scope)
// gains 3 more. The server is asked for exactly one list per gained
// namespace, at the cache's resource version, and lists their 75 objects
// alone; the handler hears exactly their 75 adds. Removing them again makes
// no list request and tells exactly their 75 deletions, with the final
// state known. Each time the cache equals a fresh informer's of the scope.
func TestGainListsOnlyTheNewNamespaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		keys := seed(t, srv, namespaces(0, 8), 25)
		before := scope.Scope{Namespaces: namespaces(0, 4)}
		h := start(t, srv, before, nil)
		defer h.stop()
		h.settle()
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, before.Namespaces...)); !slices.Equal(got, want) {
			t.Fatalf("initial sync: calls %v, want %v", got, want)
		}
		lists(srv)

		rv := h.inf.LastSyncResourceVersion()
		listedBefore := h.src.Stats().ListedObjects
		after := scope.Scope{Namespaces: namespaces(0, 7)}
		if err := h.src.Update(t.Context(), after); err != nil {
			t.Fatal(err)
		}
		h.settle()
		var want []string
		for _, ns := range []string{"n4", "n5", "n6"} {
			want = append(want, fmt.Sprintf("ns=%s rv=%s match=Exact labels=", ns, rv))
		}
		got, watches := lists(srv)
		if !slices.Equal(got, want) {
			t.Fatalf("adding n4-n6: lists %v, want %v", got, want)
		}
		if n := h.src.Stats().ListedObjects - listedBefore; n != 75 {
			t.Fatalf("adding n4-n6 listed %d objects, want 75", n)
		}
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, "n4", "n5", "n6")); !slices.Equal(got, want) {
			t.Fatalf("adding n4-n6: calls %v, want %v", got, want)
		}
		if got, want := cached(h.inf), fresh(t, srv, after); !maps.Equal(got, want) {
			t.Fatalf("after adding: cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
		t.Logf("adding 3 namespaces: %d list requests, 75 objects listed, %d watch reopened", len(got), watches)
		lists(srv)

		if err := h.src.Update(t.Context(), before); err != nil {
			t.Fatal(err)
		}
		h.settle()
		if got, watches := lists(srv); len(got) != 0 || watches != 1 {
			t.Fatalf("removing n4-n6: lists %v and %d watches, want no list and the one watch reopened", got, watches)
		}
		if got, want := h.rec.take(), prefixed("delete", keysIn(keys, "n4", "n5", "n6")); !slices.Equal(got, want) {
			t.Fatalf("removing n4-n6: calls %v, want %v", got, want)
		}
		if got, want := cached(h.inf), fresh(t, srv, before); !maps.Equal(got, want) {
			t.Fatalf("after removing: cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
		if st := h.src.Status(); !st.Scope.Equal(before) || st.Pending || st.LastError != nil {
			t.Fatalf("status %+v", st)
		}
	})
}

// TestSelectorChange: a new label selector lists the scope's namespaces
// once under it (server side, at the cache's resource version); the
// objects it no longer selects leave with their final state known and the
// ones it still selects are not told again. Dropping the selector lists
// again and adds only the objects it brings back.
func TestSelectorChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		keys := seed(t, srv, namespaces(0, 3), 10)
		all := scope.Scope{Namespaces: []string{"n0", "n1"}}
		h := start(t, srv, all, nil)
		defer h.stop()
		h.settle()
		h.rec.take()
		lists(srv)
		odd := func() []string {
			var out []string
			for _, k := range keysIn(keys, "n0", "n1") {
				var i int
				if _, err := fmt.Sscanf(k[strings.Index(k, "/")+1:], "cm-%03d", &i); err != nil {
					t.Fatal(err)
				}
				if i%2 == 1 {
					out = append(out, k)
				}
			}
			return out
		}()

		rv := h.inf.LastSyncResourceVersion()
		even := scope.Scope{Namespaces: []string{"n0", "n1"}, LabelSelector: "tier=even"}
		if err := h.src.Update(t.Context(), even); err != nil {
			t.Fatal(err)
		}
		h.settle()
		want := []string{"ns=n0 rv=" + rv + " match=Exact labels=tier=even", "ns=n1 rv=" + rv + " match=Exact labels=tier=even"}
		if got, _ := lists(srv); !slices.Equal(got, want) {
			t.Fatalf("selector tier=even: lists %v, want %v", got, want)
		}
		if got, want := h.rec.take(), prefixed("delete", odd); !slices.Equal(got, want) {
			t.Fatalf("selector tier=even: calls %v, want %v", got, want)
		}
		if got, want := cached(h.inf), fresh(t, srv, even); !maps.Equal(got, want) {
			t.Fatalf("selector tier=even: cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
		lists(srv)

		if err := h.src.Update(t.Context(), all); err != nil {
			t.Fatal(err)
		}
		h.settle()
		if got, want := h.rec.take(), prefixed("add", odd); !slices.Equal(got, want) {
			t.Fatalf("selector dropped: calls %v, want %v", got, want)
		}
		if got, want := cached(h.inf), fresh(t, srv, all); !maps.Equal(got, want) {
			t.Fatalf("selector dropped: cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
	})
}

// TestInvalidScopeIsRefused: a bad namespace name or selector is refused
// by Update with an error naming it, before any request; the scope, the
// cache and the handlers stay as they were.
func TestInvalidScopeIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		seed(t, srv, namespaces(0, 2), 5)
		sc := scope.Scope{Namespaces: []string{"n0"}}
		h := start(t, srv, sc, nil)
		defer h.stop()
		h.settle()
		h.rec.take()
		lists(srv)
		before := cached(h.inf)
		for _, tc := range []struct {
			scope scope.Scope
			want  string
		}{
			{scope.Scope{Namespaces: []string{"n0", "Bad_NS"}}, `namespace "Bad_NS"`},
			{scope.Scope{Namespaces: []string{""}}, `namespace ""`},
			{scope.Scope{LabelSelector: "tier in ("}, `label selector "tier in ("`},
			{scope.Scope{FieldSelector: "metadata.name"}, `field selector "metadata.name"`},
		} {
			err := h.src.Update(t.Context(), tc.scope)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Update(%v) = %v, want an error naming %s", tc.scope, err, tc.want)
			}
		}
		h.settle()
		if got, watches := lists(srv); len(got) != 0 || watches != 0 {
			t.Fatalf("refused scopes made requests: lists %v, %d watches", got, watches)
		}
		if got := h.rec.take(); len(got) != 0 {
			t.Fatalf("refused scopes told handlers %v", got)
		}
		if got := cached(h.inf); !maps.Equal(got, before) {
			t.Fatalf("cache changed: %v, want %v", sortedKeys(got), sortedKeys(before))
		}
		if st := h.src.Status(); !st.Scope.Equal(sc) || !st.Desired.Equal(sc) || st.Pending {
			t.Fatalf("status %+v, want the scope %v kept", st, sc)
		}
	})
}

// TestForbiddenNamespaceKeepsTheOldScope: a new scope with a namespace
// the server refuses (403) is reported by Update and Status, and the
// cache keeps the old scope whole, with no handler call; the next change
// without it applies.
func TestForbiddenNamespaceKeepsTheOldScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		keys := seed(t, srv, []string{"n0", "n1", "n2", "secret"}, 5)
		wrap := func(ns string, lw cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
			if ns == "secret" {
				return forbidden{lw, ns}
			}
			return lw
		}
		old := scope.Scope{Namespaces: []string{"n0", "n1"}}
		h := start(t, srv, old, wrap)
		defer h.stop()
		h.settle()
		h.rec.take()
		before := cached(h.inf)

		err := h.src.Update(t.Context(), scope.Scope{Namespaces: []string{"n0", "n1", "n2", "secret"}})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `"secret"`) {
			t.Fatalf("Update with a forbidden namespace = %v, want a 403 naming it", err)
		}
		h.settle()
		if got := h.rec.take(); len(got) != 0 {
			t.Fatalf("a refused scope told handlers %v", got)
		}
		if got := cached(h.inf); !maps.Equal(got, before) {
			t.Fatalf("cache %v, want the old scope's %v", sortedKeys(got), sortedKeys(before))
		}
		st := h.src.Status()
		if !st.Scope.Equal(old) || !st.Desired.Equal(old) || st.Pending || !apierrors.IsForbidden(st.LastError) {
			t.Fatalf("status %+v, want the old scope and the 403", st)
		}
		if got := h.src.Stats().Refused; got != 1 {
			t.Fatalf("Refused = %d, want 1", got)
		}

		if err := h.src.Update(t.Context(), scope.Scope{Namespaces: []string{"n0", "n1", "n2"}}); err != nil {
			t.Fatal(err)
		}
		h.settle()
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, "n2")); !slices.Equal(got, want) {
			t.Fatalf("then adding n2: calls %v, want %v", got, want)
		}
		if st := h.src.Status(); st.LastError != nil {
			t.Fatalf("LastError %v after a change applied", st.LastError)
		}
	})
}

// gate holds the lists of a wrapped lister-watcher until open is closed
// (or the list's context ends).
type gate struct {
	cache.ListerWatcherWithContext
	open <-chan struct{}
}

func (g gate) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.ListerWatcherWithContext.ListWithContext(ctx, opts)
}

// TestChangesCoalesce: changes asked for while one is being applied make
// one change to the last of them: the lists of the earlier ones are
// abandoned before they reach the server, every Update returns once the
// last is applied, and the handlers hear only the difference to it.
func TestChangesCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		keys := seed(t, srv, namespaces(0, 5), 5)
		open := make(chan struct{})
		wrap := func(ns string, lw cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
			if ns == "n0" {
				return lw
			}
			return gate{lw, open}
		}
		h := start(t, srv, scope.Scope{Namespaces: []string{"n0"}}, wrap)
		defer h.stop()
		h.settle()
		h.rec.take()
		lists(srv)
		rv := h.inf.LastSyncResourceVersion()

		errs := make(chan error, 3)
		update := func(nss ...string) {
			go func() { errs <- h.src.Update(t.Context(), scope.Scope{Namespaces: nss}) }()
			synctest.Wait() // its relist is held at the gate
		}
		update("n0", "n2")
		update("n0", "n3")
		last := scope.Scope{Namespaces: []string{"n0", "n4"}}
		update(last.Namespaces...)
		close(open)
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		h.settle()
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, "n4")); !slices.Equal(got, want) {
			t.Fatalf("calls %v, want %v", got, want)
		}
		if got, _ := lists(srv); !slices.Equal(got, []string{"ns=n4 rv=" + rv + " match=Exact labels="}) {
			t.Fatalf("lists %v, want the one of n4", got)
		}
		if got, want := cached(h.inf), fresh(t, srv, last); !maps.Equal(got, want) {
			t.Fatalf("cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
	})
}

// TestScopeChangesUnderChurn: while a churn writes in every namespace, in
// scope or not, the scope gains and loses namespaces and changes its
// selector; at the end the cache equals a fresh informer's of the final
// scope, and the handler calls, replayed from the first sync, make exactly
// that cache, with no call that changes nothing (an add of a cached key, an
// update or delete of one not cached).
func TestScopeChangesUnderChurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		nss := namespaces(0, 6)
		seed(t, srv, nss, 10)
		churn, err := fake.NewChurn(srv, fake.ChurnOptions{Resource: fake.ConfigMaps().GVR, Namespaces: nss, Seed: 7, MaxObjects: 90, Rate: 200})
		if err != nil {
			t.Fatal(err)
		}
		h := start(t, srv, scope.Scope{Namespaces: []string{"n0", "n1"}}, nil)
		defer h.stop()
		ctx, cancel := context.WithCancel(t.Context())
		churned := make(chan error, 1)
		go func() { churned <- churn.Run(ctx) }()

		steps := []scope.Scope{
			{Namespaces: []string{"n0", "n1", "n2", "n3"}},
			{Namespaces: []string{"n1", "n3"}},
			{Namespaces: []string{"n1", "n3"}, LabelSelector: "churn=a"},
			{Namespaces: []string{"n0", "n1", "n3", "n5"}, LabelSelector: "churn=a"},
			{},
			{Namespaces: []string{"n2"}},
			{Namespaces: []string{"n2", "n4", "n5"}, LabelSelector: "churn!=b"},
		}
		for _, sc := range steps {
			if err := h.src.Update(t.Context(), sc); err != nil {
				t.Fatalf("Update(%v): %v", sc, err)
			}
		}
		cancel()
		if err := <-churned; err != nil {
			t.Fatal(err)
		}
		h.settle()
		final := steps[len(steps)-1]
		want := fresh(t, srv, final)
		if got := cached(h.inf); !maps.Equal(got, want) {
			t.Fatalf("cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
		calls := h.rec.all()
		if got := replay(t, calls); !slices.Equal(got, sortedKeys(want)) {
			t.Fatalf("the handler's calls make %v, want %v", got, sortedKeys(want))
		}
		st := h.src.Stats()
		t.Logf("%d handler calls over %d scope changes under churn (server at resource version %s); %d local relists, %d list requests",
			len(calls), len(steps), srv.ResourceVersion(), st.LocalRelists, st.Lists)
	})
}

// TestAllNamespaces: narrowing every namespace to one lists nothing and
// deletes the others' objects; widening back to all makes one cluster-wide
// list (the server cannot be asked for "all but n0") whose unchanged n0
// objects are not told again.
func TestAllNamespaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		keys := seed(t, srv, namespaces(0, 3), 4)
		h := start(t, srv, scope.Scope{}, nil)
		defer h.stop()
		h.settle()
		if got, want := h.rec.take(), prefixed("add", keys); !slices.Equal(got, want) {
			t.Fatalf("initial sync: calls %v, want %v", got, want)
		}
		lists(srv)
		rv := h.inf.LastSyncResourceVersion()

		one := scope.Scope{Namespaces: []string{"n0"}}
		if err := h.src.Update(t.Context(), one); err != nil {
			t.Fatal(err)
		}
		h.settle()
		if got, _ := lists(srv); len(got) != 0 {
			t.Fatalf("narrowing to n0: lists %v, want none", got)
		}
		if got, want := h.rec.take(), prefixed("delete", keysIn(keys, "n1", "n2")); !slices.Equal(got, want) {
			t.Fatalf("narrowing to n0: calls %v, want %v", got, want)
		}

		if err := h.src.Update(t.Context(), scope.Scope{}); err != nil {
			t.Fatal(err)
		}
		h.settle()
		if got, want := lists(srv); !slices.Equal(got, []string{"ns= rv=" + rv + " match=Exact labels="}) {
			t.Fatalf("widening to all: lists %v (%d watches), want one cluster-wide list", got, want)
		}
		if got, want := h.rec.take(), prefixed("add", keysIn(keys, "n1", "n2")); !slices.Equal(got, want) {
			t.Fatalf("widening to all: calls %v, want %v", got, want)
		}
		if got, want := cached(h.inf), fresh(t, srv, scope.Scope{}); !maps.Equal(got, want) {
			t.Fatalf("cache %v, want %v", sortedKeys(got), sortedKeys(want))
		}
	})
}

// TestUpdateBeforeTheFirstList: an Update before the informer runs sets
// the scope its first list serves, and returns at once.
func TestUpdateBeforeTheFirstList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		keys := seed(t, srv, namespaces(0, 3), 2)
		src, err := scope.NewSource(t.Context(), scope.SourceOptions{Inner: inner(srv, nil), Scope: scope.Scope{Namespaces: []string{"n0"}}})
		if err != nil {
			t.Fatal(err)
		}
		sc := scope.Scope{Namespaces: []string{"n1", "n2"}}
		if err := src.Update(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		scope.Attach(src, inf)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- inf.Run(ctx) }()
		if err := inf.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := sortedKeys(cached(inf)), keysIn(keys, "n1", "n2"); !slices.Equal(got, want) {
			t.Fatalf("cache %v, want %v", got, want)
		}
		if err := inf.Fresh(ctx); err != nil {
			t.Fatalf("Fresh: %v", err)
		}
		// The scope counts as held once the reflector took the list: its
		// watch opened from the list's resource version.
		synctest.Wait()
		if st := src.Status(); !st.Scope.Equal(sc) || st.Pending {
			t.Fatalf("status %+v", st)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// watchForbidden wraps a lister-watcher whose watches fail with 403.
type watchForbidden struct{ cache.ListerWatcherWithContext }

func (watchForbidden) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, forbiddenErr("")
}

// TestClusterWatchForbidden: a user who may watch only in its namespaces
// keeps a scope of one namespace, watched there; a change to two, which
// would be watched cluster-wide, is refused with the 403 before its list
// reaches the cache.
func TestClusterWatchForbidden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		seed(t, srv, namespaces(0, 2), 3)
		wrap := func(ns string, lw cache.ListerWatcherWithContext) cache.ListerWatcherWithContext {
			if ns == "" {
				return watchForbidden{lw}
			}
			return lw
		}
		old := scope.Scope{Namespaces: []string{"n0"}}
		h := start(t, srv, old, wrap)
		defer h.stop()
		h.settle()
		h.rec.take()
		before := cached(h.inf)
		lists(srv)
		err := h.src.Update(t.Context(), scope.Scope{Namespaces: []string{"n0", "n1"}})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "cluster-wide") {
			t.Fatalf("Update = %v, want the 403 of the cluster-wide watch", err)
		}
		h.settle()
		if got := h.rec.take(); len(got) != 0 {
			t.Fatalf("a refused scope told handlers %v", got)
		}
		if got, _ := lists(srv); len(got) != 0 {
			t.Fatalf("a refused scope listed %v", got)
		}
		if got := cached(h.inf); !maps.Equal(got, before) {
			t.Fatalf("cache %v, want %v", sortedKeys(got), sortedKeys(before))
		}
		if st := h.src.Status(); !st.Scope.Equal(old) || st.Pending {
			t.Fatalf("status %+v", st)
		}
	})
}
