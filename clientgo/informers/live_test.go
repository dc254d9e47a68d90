package informers_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/informers"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/scope"
)

// calls records a client-go handler's calls as "add ns/name",
// "update ns/name", "delete ns/name" or "tombstone ns/name".
type calls struct {
	mu  sync.Mutex
	got []string
}

func (c *calls) record(verb string, obj any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		c.got = append(c.got, "tombstone "+d.Key)
		return
	}
	m := obj.(metav1.Object)
	c.got = append(c.got, verb+" "+m.GetNamespace()+"/"+m.GetName())
}

func (c *calls) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.record("add", obj) },
		UpdateFunc: func(_, obj any) { c.record("update", obj) },
		DeleteFunc: func(obj any) { c.record("delete", obj) },
	}
}

// await returns the calls made since the last await once there are n,
// sorted; it fails the test after 10s.
func (c *calls) await(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		if len(c.got) >= n {
			out := c.got
			c.got = nil
			c.mu.Unlock()
			slices.Sort(out)
			return out
		}
		got := slices.Clone(c.got)
		c.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %d handler calls, got %v", n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWithLiveScope changes the namespace and label selector of a
// factory's Pod informer while it runs, over a clientset of a fake server
// served over HTTP: gaining a namespace lists that namespace alone and
// tells the handler an add for each of its pods; a selector change lists
// the new scope, and the pods it no longer selects, like those of a
// namespace lost, are deleted with their final state (no tombstone);
// unchanged pods are not told again; the handler registration, lister and
// indexer stay. An invalid scope is refused and changes nothing; a factory
// without the option refuses SetScope.
func TestWithLiveScope(t *testing.T) {
	ctx := t.Context()
	srv := fake.NewTestServer(t, fake.Options{})
	for _, ns := range []string{"a", "b", "c"} {
		for _, name := range []string{"web", "db"} {
			if _, err := srv.Create(ctx, objects.Pod(ns, name, objects.Labels(map[string]string{"app": name}))); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := fakeapi.ServeTest(t, srv, fakeapi.Options{})
	cfg.QPS = -1
	cs := kubernetes.NewForConfigOrDie(cfg)

	if err := informers.SetScope(ctx, informers.NewSharedInformerFactory(cs, 0), scope.Scope{}); err == nil ||
		!strings.Contains(err.Error(), "WithLiveScope") {
		t.Fatalf("SetScope on a factory without WithLiveScope = %v, want an error naming the option", err)
	}

	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("a"), informers.WithLiveScope(),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app" }))
	if sc, ok := informers.ScopeOf(f); !ok || !sc.Equal(scope.Scope{Namespaces: []string{"a"}, LabelSelector: "app"}) {
		t.Fatalf("ScopeOf = %v, %v; want the factory's namespace and selector", sc, ok)
	}
	pods := f.Core().V1().Pods()
	inf, lister := pods.Informer(), pods.Lister()
	rec := &calls{}
	if _, err := inf.AddEventHandler(rec.handler()); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)
	if got := rec.await(t, 2); !slices.Equal(got, []string{"add a/db", "add a/web"}) {
		t.Fatalf("initial sync: %v", got)
	}

	srv.ResetCalls()
	if err := informers.SetScope(ctx, f, scope.Scope{Namespaces: []string{"a", "b"}, LabelSelector: "app"}); err != nil {
		t.Fatal(err)
	}
	if got := rec.await(t, 2); !slices.Equal(got, []string{"add b/db", "add b/web"}) {
		t.Fatalf("gaining b: %v", got)
	}
	var listed []string
	for _, c := range srv.Calls() {
		if c.Verb == fake.VerbList {
			listed = append(listed, c.Namespace+"?"+c.Options.LabelSelector)
		}
	}
	if !slices.Equal(listed, []string{"b?app"}) {
		t.Fatalf("gaining b listed %v, want b alone with the selector", listed)
	}
	if got, err := lister.Pods("b").List(labels.Everything()); err != nil || len(got) != 2 {
		t.Fatalf("lister of b: %v, %v", names(got), err)
	}

	if err := informers.SetScope(ctx, f, scope.Scope{Namespaces: []string{"b", "c"}, LabelSelector: "app=web"}); err != nil {
		t.Fatal(err)
	}
	if got := rec.await(t, 4); !slices.Equal(got, []string{"add c/web", "delete a/db", "delete a/web", "delete b/db"}) {
		t.Fatalf("to b, c with app=web: %v", got)
	}
	if got, err := lister.List(labels.Everything()); err != nil || !slices.Equal(names(got), []string{"b/web", "c/web"}) {
		t.Fatalf("lister: %v, %v", names(got), err)
	}
	if got, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, "c"); err != nil || len(got) != 1 {
		t.Fatalf("namespace index of c: %d, %v", len(got), err)
	}

	if err := informers.SetScope(ctx, f, scope.Scope{Namespaces: []string{"Not_A_Namespace"}}); err == nil {
		t.Fatal("an invalid namespace was accepted")
	}
	if sc, _ := informers.ScopeOf(f); !sc.Equal(scope.Scope{Namespaces: []string{"b", "c"}, LabelSelector: "app=web"}) {
		t.Fatalf("after a refused scope: %v", sc)
	}

	// A write after the changes reaches the handler: the watch is of the
	// new scope.
	if _, err := srv.Create(ctx, objects.Pod("c", "web2", objects.Labels(map[string]string{"app": "web"}))); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Create(ctx, objects.Pod("a", "web2", objects.Labels(map[string]string{"app": "web"}))); err != nil {
		t.Fatal(err)
	}
	if got := rec.await(t, 1); !slices.Equal(got, []string{"add c/web2"}) {
		t.Fatalf("after a write: %v", got)
	}
	time.Sleep(50 * time.Millisecond)
	if got := rec.await(t, 0); len(got) != 0 {
		t.Fatalf("unexpected calls %v", got)
	}
}
