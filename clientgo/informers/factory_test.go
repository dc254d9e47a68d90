package informers_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	upstream "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/informers"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// isListwatch reports whether inf is listwatch's informer (the drop-in of
// clientgo/tools/cache) rather than client-go's.
func isListwatch(inf cache.SharedIndexInformer) bool {
	return reflect.TypeOf(inf) == reflect.TypeOf(lwcache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, nil))
}

// startAndSync starts f until the test ends and waits for its informers.
func startAndSync(t *testing.T, f informers.SharedInformerFactory) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	f.StartWithContext(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	res := f.WaitForCacheSyncWithContext(wctx)
	if err := res.AsError(); err != nil {
		t.Fatalf("WaitForCacheSyncWithContext: %v", err)
	}
}

func names[T any](objs []T) []string {
	var out []string
	for _, o := range objs {
		m := any(o).(metav1.Object)
		out = append(out, m.GetNamespace()+"/"+m.GetName())
	}
	slices.Sort(out)
	return out
}

// With client-go's fake clientset (no REST client), the factory's
// informers are listwatch's over the clientset's List and Watch: the typed
// listers see the cache, the namespace and the tweak apply, and later
// writes arrive.
func TestFakeClientsetListers(t *testing.T) {
	cs := k8sfake.NewClientset(
		objects.Pod("a", "p1", objects.Labels(map[string]string{"app": "web"})),
		objects.Pod("a", "p2", objects.Labels(map[string]string{"app": "db"})),
		objects.Pod("b", "p3", objects.Labels(map[string]string{"app": "web"})),
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "d1"}},
	)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithNamespace("a"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }))
	pods := f.Core().V1().Pods()
	deployments := f.Apps().V1().Deployments()
	pods.Informer()
	deployments.Informer()
	if !isListwatch(f.InformerFor(&corev1.Pod{}, nil)) {
		t.Fatalf("the pod informer is a %T, not listwatch's", f.InformerFor(&corev1.Pod{}, nil))
	}
	startAndSync(t, f)

	got, err := pods.Lister().List(labels.Everything())
	if err != nil || !slices.Equal(names(got), []string{"a/p1"}) {
		t.Fatalf("pod lister = %v, %v; want [a/p1] (namespace a, app=web)", names(got), err)
	}
	if _, err := pods.Lister().Pods("a").Get("p1"); err != nil {
		t.Fatalf("Pods(a).Get(p1): %v", err)
	}
	// The tweak's label selector applies to deployments too (d1 has none).
	if ds, _ := deployments.Lister().List(labels.Everything()); len(ds) != 0 {
		t.Fatalf("deployment lister = %v; want none", names(ds))
	}

	// A write reaches the lister through the watch.
	added := make(chan struct{})
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if obj.(*corev1.Pod).Name == "p4" {
			close(added)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("a").Create(t.Context(), objects.Pod("a", "p4", objects.Labels(map[string]string{"app": "web"})), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-added:
	case <-time.After(30 * time.Second):
		t.Fatal("the created pod never reached the handler")
	}
	if _, err := pods.Lister().Pods("a").Get("p4"); err != nil {
		t.Fatalf("Pods(a).Get(p4) after the handler saw it: %v", err)
	}
}

// Informers are shared by type: every accessor, InformerFor and
// ForResource give the same one.
func TestSharedByType(t *testing.T) {
	f := informers.NewSharedInformerFactory(k8sfake.NewClientset(), 0)
	a := f.Core().V1().Pods().Informer()
	b := f.InformerFor(&corev1.Pod{}, nil)
	g, err := f.ForResource(corev1.SchemeGroupVersion.WithResource("pods"))
	if err != nil {
		t.Fatal(err)
	}
	if a.GetIndexer() != b.GetIndexer() || g.Informer().GetIndexer() != b.GetIndexer() {
		t.Fatal("the typed accessor, InformerFor and ForResource gave different informers")
	}
}

// ForResource serves every resource client-go's factory serves, with a
// generic lister over the same cache, and refuses the others as client-go
// does.
func TestForResource(t *testing.T) {
	cs := k8sfake.NewClientset(objects.Pod("a", "p1"), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	f := informers.NewSharedInformerFactory(cs, 0)
	pods, err := f.ForResource(corev1.SchemeGroupVersion.WithResource("pods"))
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := f.ForResource(corev1.SchemeGroupVersion.WithResource("nodes"))
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)
	if obj, err := pods.Lister().ByNamespace("a").Get("p1"); err != nil || obj.(*corev1.Pod).Name != "p1" {
		t.Fatalf("generic lister Get(a/p1) = %v, %v", obj, err)
	}
	if objs, err := nodes.Lister().List(labels.Everything()); err != nil || len(objs) != 1 {
		t.Fatalf("generic node lister = %v, %v; want n1", objs, err)
	}

	bogus := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	_, err = f.ForResource(bogus)
	_, upErr := upstream.NewSharedInformerFactory(cs, 0).ForResource(bogus)
	if err == nil || upErr == nil || err.Error() != upErr.Error() {
		t.Fatalf("ForResource(%v) = %v; client-go says %v", bogus, err, upErr)
	}
	// Every resource of client-go's factory, and only those.
	for _, gvr := range []schema.GroupVersionResource{
		appsv1.SchemeGroupVersion.WithResource("deployments"),
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses"},
	} {
		if _, err := f.ForResource(gvr); err != nil {
			t.Errorf("ForResource(%v): %v", gvr, err)
		}
	}
}

// A newFunc other than client-go's default is called as client-go calls
// it, with the client and the type's resync period; the factory keeps
// what it returns, with the factory's transform set.
func TestInformerForCustomNewFunc(t *testing.T) {
	cs := k8sfake.NewClientset(objects.Pod("a", "p1"), objects.Pod("a", "p2", objects.Labels(map[string]string{"phase": "running"})))
	var transformed []string
	f := informers.NewSharedInformerFactoryWithOptions(cs, time.Hour,
		informers.WithCustomResyncConfig(map[metav1.Object]time.Duration{&corev1.Pod{}: time.Minute}),
		informers.WithTransform(func(obj any) (any, error) {
			if p, ok := obj.(*corev1.Pod); ok {
				transformed = append(transformed, p.Name)
			}
			return obj, nil
		}))
	var gotClient kubernetes.Interface
	var gotResync time.Duration
	var built cache.SharedIndexInformer
	// kube-scheduler's kind of newFunc (its selects pods that are not
	// terminal), with this import path's informer.
	newFunc := func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		gotClient, gotResync = c, resync
		built = lwcache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = "phase=running"
				return c.CoreV1().Pods("").List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = "phase=running"
				return c.CoreV1().Pods("").Watch(ctx, o)
			},
		}, c), &corev1.Pod{}, resync, cache.Indexers{})
		return built
	}
	inf := f.InformerFor(&corev1.Pod{}, newFunc)
	if inf != built || gotClient != kubernetes.Interface(cs) || gotResync != time.Minute {
		t.Fatalf("InformerFor gave %p (built %p), called newFunc with %v, %v; want the built one, the clientset, 1m", inf, built, gotClient, gotResync)
	}
	// The typed accessor now gives that informer.
	if f.Core().V1().Pods().Informer().GetIndexer() != built.GetIndexer() {
		t.Fatal("the typed accessor does not give the custom informer")
	}
	startAndSync(t, f)
	if !slices.Equal(transformed, []string{"p2"}) {
		t.Fatalf("transform saw %v; want [p2] (the custom informer's list, with the factory's transform)", transformed)
	}
}

// The factory's transform applies to its own informers too, after
// decoding.
func TestWithTransform(t *testing.T) {
	cs := k8sfake.NewClientset(objects.Pod("a", "p1", objects.Labels(map[string]string{"app": "web"})))
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(func(obj any) (any, error) {
		p := obj.(*corev1.Pod)
		p.Labels = nil
		p.Annotations = map[string]string{"transformed": "yes"}
		return p, nil
	}))
	lister := f.Core().V1().Pods().Lister()
	startAndSync(t, f)
	p, err := lister.Pods("a").Get("p1")
	if err != nil || p.Labels != nil || p.Annotations["transformed"] != "yes" {
		t.Fatalf("cached pod = %+v, %v; want the transformed pod", p, err)
	}
}

// An option from client-go's package cannot be read: the constructor then
// returns client-go's own factory with every option applied.
func TestClientGoOptionFallsBack(t *testing.T) {
	cs := k8sfake.NewClientset(objects.Pod("a", "p1"), objects.Pod("b", "p2"))
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(nil), upstream.WithNamespace("b"))
	inf := f.Core().V1().Pods().Informer()
	if isListwatch(f.InformerFor(&corev1.Pod{}, nil)) {
		t.Fatal("a client-go option gave listwatch's factory")
	}
	startAndSync(t, f)
	if got := names(inf.GetStore().List()); !slices.Equal(got, []string{"b/p2"}) {
		t.Fatalf("cached %v; want [b/p2]: client-go's option applied", got)
	}
}

// This package's options given to client-go's factory are client-go's.
func TestOptionsOnClientGoFactory(t *testing.T) {
	cs := k8sfake.NewClientset(objects.Pod("a", "p1"), objects.Pod("b", "p2"))
	f := upstream.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("b"), informers.WithMemoryOptions(informers.MemoryOptions{}))
	inf := f.Core().V1().Pods().Informer()
	startAndSync(t, f)
	if got := names(inf.GetStore().List()); !slices.Equal(got, []string{"b/p2"}) {
		t.Fatalf("client-go's factory cached %v; want [b/p2]", got)
	}
}

// WaitForCacheSync reports each started informer: one that cannot list
// is false, with the context's cause as the error; informers not started
// are not reported.
func TestWaitForCacheSyncResults(t *testing.T) {
	cs := k8sfake.NewClientset(objects.Pod("a", "p1"))
	cs.PrependReactor("list", "configmaps", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("configmaps are down")
	})
	f := informers.NewSharedInformerFactory(cs, 0)
	f.Core().V1().Pods().Informer()
	f.Core().V1().ConfigMaps().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.StartWithContext(ctx)
	f.Core().V1().Secrets().Informer() // not started

	cause := errors.New("gave up waiting")
	wctx, wcancel := context.WithCancelCause(ctx)
	wcancel(cause)
	_ = f.WaitForCacheSync(wctx.Done()) // returns at once

	// Wait for the pods for real, then give up on the config maps.
	podSynced := f.Core().V1().Pods().Informer().HasSyncedChecker()
	if !cache.WaitFor(ctx, "pods", podSynced) {
		t.Fatal("pods never synced")
	}
	res := f.WaitForCacheSyncWithContext(wctx)
	want := map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true, reflect.TypeOf(&corev1.ConfigMap{}): false}
	if !reflect.DeepEqual(res.Synced, want) || !errors.Is(res.Err, cause) {
		t.Fatalf("WaitForCacheSyncWithContext = %v, %v; want %v, %v", res.Synced, res.Err, want, cause)
	}
	if got := f.WaitForCacheSync(wctx.Done()); !reflect.DeepEqual(got, want) {
		t.Fatalf("WaitForCacheSync = %v; want %v", got, want)
	}
}

// After Shutdown, Start starts nothing.
func TestShutdown(t *testing.T) {
	f := informers.NewSharedInformerFactory(k8sfake.NewClientset(), 0)
	inf := f.Core().V1().Pods().Informer()
	f.Shutdown()
	f.StartWithContext(t.Context())
	f.Shutdown()
	if inf.HasSynced() || inf.IsStopped() {
		t.Fatal("an informer ran after Shutdown")
	}
}

// The factory's informers of built-in types decode with restsource over
// the clientset's REST client (here a fake.Server served over HTTP):
// by default without managedFields, with them under
// WithMemoryOptions(MemoryOptions{}); the namespace and tweak apply.
func TestRESTSourceMemoryOptions(t *testing.T) {
	srv := fake.NewTestServer(t, fake.Options{FieldManager: "kubectl"})
	for i, ns := range []string{"a", "a", "b"} {
		p := objects.Pod(ns, fmt.Sprintf("p%d", i), objects.Labels(map[string]string{"app": "web"}))
		p.Spec.Containers = []corev1.Container{{Name: "c", Image: "nginx"}}
		if _, err := srv.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(fakeapi.ServeTest(t, srv, fakeapi.Options{}))
	for _, tc := range []struct {
		name          string
		opts          []informers.SharedInformerOption
		managedFields bool
	}{
		{name: "default", managedFields: false},
		{name: "off", opts: []informers.SharedInformerOption{informers.WithMemoryOptions(informers.MemoryOptions{})}, managedFields: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]informers.SharedInformerOption{
				informers.WithNamespace("a"),
				informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name!=p1" }),
			}, tc.opts...)
			f := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
			lister := f.Core().V1().Pods().Lister()
			if !isListwatch(f.InformerFor(&corev1.Pod{}, nil)) {
				t.Fatal("not listwatch's informer")
			}
			startAndSync(t, f)
			got, err := lister.List(labels.Everything())
			if err != nil || !slices.Equal(names(got), []string{"a/p0"}) {
				t.Fatalf("lister = %v, %v; want [a/p0]", names(got), err)
			}
			if has := len(got[0].ManagedFields) > 0; has != tc.managedFields {
				t.Fatalf("cached pod has managedFields: %v; want %v", has, tc.managedFields)
			}
			want, err := srv.Get(t.Context(), fake.Pods().GVR, "a", "p0")
			if err != nil {
				t.Fatal(err)
			}
			w := want.(*corev1.Pod)
			if !tc.managedFields {
				w.ManagedFields = nil
			}
			if !reflect.DeepEqual(got[0], w) {
				t.Fatalf("cached pod differs from the server's:\n got %+v\nwant %+v", got[0], w)
			}
		})
	}
}
