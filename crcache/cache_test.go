package crcache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/listwatch/listwatch/clientgo/informers"
	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/informer/statuspage"
)

func TestMain(m *testing.M) {
	// controller-runtime wraps every metadata-only watch in apimachinery's
	// watch.Filter, whose goroutine blocks for ever in a send when an
	// event (the stream's end as an ERROR event) arrives after its reader
	// stopped: Stop cannot reach it. Everything else must be gone.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"))
}

// recorder records what a cache logs as not decoded by restsource (the
// example's type) and the informers it builds ("example informer" types).
type recorder struct {
	mu               sync.Mutex
	fallbacks, built []string
}

// options are crcache's options with mem, logging and building into r.
func (r *recorder) options(mem *informers.MemoryOptions) crcache.Options {
	return crcache.Options{
		Memory: mem,
		Logger: funcr.New(func(_, args string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if i := strings.Index(args, `"type"="`); i >= 0 {
				rest := args[i+len(`"type"="`):]
				r.fallbacks = append(r.fallbacks, rest[:strings.IndexByte(rest, '"')])
			}
		}, funcr.Options{Verbosity: 1}),
		OnNewInformer: func(example runtime.Object, inf toolscache.SharedIndexInformer) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.built = append(r.built, fmt.Sprintf("%T %T", example, inf))
		},
	}
}

func (r *recorder) get() (fallbacks, built []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.fallbacks), slices.Clone(r.built)
}

// newServer is a fake.Server with pods and configmaps in namespaces a
// and b, written with managedFields.
func newServer(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewTestServer(t, fake.Options{FieldManager: "kubectl"})
	for i, p := range []struct{ ns, app, node string }{{"a", "web", "n1"}, {"a", "db", "n2"}, {"b", "web", "n1"}, {"b", "web", "n2"}} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: fmt.Sprintf("p%d", i), Labels: map[string]string{"app": p.app}},
			Spec:       corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
		if _, err := srv.Create(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: fmt.Sprintf("c%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := srv.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

func mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{corev1.SchemeGroupVersion})
	// The list kinds too: the multi-namespace cache maps the list's kind.
	for _, kind := range []string{"Pod", "PodList", "ConfigMap", "ConfigMapList"} {
		m.Add(corev1.SchemeGroupVersion.WithKind(kind), meta.RESTScopeNamespace)
	}
	return m
}

// start builds a cache with newCache over srv, starts it and returns it
// once synced; it stops when the test ends.
func start(t *testing.T, srv *fake.Server, newCache cache.NewCacheFunc, opts cache.Options) cache.Cache {
	t.Helper()
	opts.Mapper = mapper()
	c, err := newCache(fakeapi.ServeTest(t, srv, fakeapi.Options{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c, "")
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatal("the cache did not sync")
	}
	return c
}

// runCache runs c.Start on a goroutine of its own until the test ends or
// stop is called (once, whichever comes first), and reports an error Start
// returns, prefixed with who (a replica's name, or "").
func runCache(t *testing.T, c cache.Cache, who string) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Start(ctx); err != nil {
			t.Errorf("%sStart: %v", who, err)
		}
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// serverPod is the server's pod, with the GVK the cache sets on what it
// hands out, and without managedFields unless keep.
func serverPod(t *testing.T, srv *fake.Server, ns, name string, keep bool) *corev1.Pod {
	t.Helper()
	obj, err := srv.Get(t.Context(), fake.Pods().GVR, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	p := obj.(*corev1.Pod)
	if len(p.ManagedFields) == 0 {
		t.Fatal("the server wrote no managedFields")
	}
	if !keep {
		p.ManagedFields = nil
	}
	p.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	return p
}

func names[T client.Object](objs []T) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// memoryCases are the memory options the tests run with: keep says
// whether cached objects keep their managedFields.
var memoryCases = []struct {
	name string
	mem  *informers.MemoryOptions
	keep bool
}{
	{name: "default"},
	{name: "memory options off", mem: &informers.MemoryOptions{}, keep: true},
	{name: "strip only", mem: &informers.MemoryOptions{StripManagedFields: true}},
}

// Typed built-in objects are decoded by restsource (no fallback logged),
// without managedFields by default and with them when the memory options
// are off; Get and List equal the server's.
func TestTypedGetList(t *testing.T) {
	srv := newServer(t)
	for _, tc := range memoryCases {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			c := start(t, srv, crcache.NewWithOptions(r.options(tc.mem)), cache.Options{})
			var got corev1.Pod
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "p0"}, &got); err != nil {
				t.Fatal(err)
			}
			if want := serverPod(t, srv, "a", "p0", tc.keep); !reflect.DeepEqual(&got, want) {
				t.Fatalf("Get:\n got %+v\nwant %+v", &got, want)
			}
			var list corev1.PodList
			if err := c.List(t.Context(), &list); err != nil {
				t.Fatal(err)
			}
			if n := names(ptrs(list.Items)); !slices.Equal(n, []string{"a/p0", "a/p1", "b/p2", "b/p3"}) {
				t.Fatalf("List = %v", n)
			}
			for _, p := range list.Items {
				if has := len(p.ManagedFields) > 0; has != tc.keep {
					t.Fatalf("%s/%s has managedFields: %v, want %v", p.Namespace, p.Name, has, tc.keep)
				}
			}
			fallbacks, built := r.get()
			if len(fallbacks) != 0 {
				t.Fatalf("fell back to controller-runtime's client for %v", fallbacks)
			}
			if want := []string{"*v1.Pod *cache.listwatchInformer"}; !slices.Equal(built, want) {
				t.Fatalf("informers built: %v, want %v", built, want)
			}
		})
	}
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// Namespaces (one, several, per object) and label and field selectors
// reach the server: the cache holds only what they select.
func TestNamespacesAndSelectors(t *testing.T) {
	srv := newServer(t)
	for _, tc := range []struct {
		name string
		opts cache.Options
		want []string
	}{
		{name: "one namespace", opts: cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}}}, want: []string{"a/p0", "a/p1"}},
		{name: "label selector", opts: cache.Options{DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})}, want: []string{"a/p0", "b/p2", "b/p3"}},
		{name: "field selector", opts: cache.Options{DefaultFieldSelector: fields.OneTermEqualSelector("spec.nodeName", "n2")}, want: []string{"a/p1", "b/p3"}},
		{name: "several namespaces with selectors", opts: cache.Options{DefaultNamespaces: map[string]cache.Config{
			"a": {LabelSelector: labels.SelectorFromSet(labels.Set{"app": "db"})},
			"b": {FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "n1")},
		}}, want: []string{"a/p1", "b/p2"}},
		{name: "by object", opts: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Namespaces: map[string]cache.Config{"b": {}}, Label: labels.SelectorFromSet(labels.Set{"app": "web"})},
		}}, want: []string{"b/p2", "b/p3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			c := start(t, srv, crcache.NewWithOptions(r.options(nil)), tc.opts)
			var list corev1.PodList
			if err := c.List(t.Context(), &list); err != nil {
				t.Fatal(err)
			}
			if n := names(ptrs(list.Items)); !slices.Equal(n, tc.want) {
				t.Fatalf("List = %v, want %v", n, tc.want)
			}
			if f, _ := r.get(); len(f) != 0 {
				t.Fatalf("fell back to controller-runtime's client for %v", f)
			}
		})
	}
}

// IndexField's indexes answer List with MatchingFields, in one namespace
// and across all, as controller-runtime's cache does.
func TestIndexField(t *testing.T) {
	srv := newServer(t)
	c := start(t, srv, crcache.New, cache.Options{})
	if err := c.IndexField(t.Context(), &corev1.Pod{}, "node", func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts []client.ListOption
		want []string
	}{
		{opts: []client.ListOption{client.MatchingFields{"node": "n1"}}, want: []string{"a/p0", "b/p2"}},
		{opts: []client.ListOption{client.MatchingFields{"node": "n2"}, client.InNamespace("b")}, want: []string{"b/p3"}},
	} {
		var list corev1.PodList
		if err := c.List(t.Context(), &list, tc.opts...); err != nil {
			t.Fatal(err)
		}
		if n := names(ptrs(list.Items)); !slices.Equal(n, tc.want) {
			t.Fatalf("List(%v) = %v, want %v", tc.opts, n, tc.want)
		}
	}
}

// Unstructured and metadata-only objects decode with restsource too, on
// listwatch's informer, with managedFields stripped by default and kept
// when opted out; the informers' own objects carry their kind, as
// controller-runtime's do.
func TestUnstructuredAndMetadata(t *testing.T) {
	srv := newServer(t)
	for _, tc := range memoryCases {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			c := start(t, srv, crcache.NewWithOptions(r.options(tc.mem)), cache.Options{DefaultNamespaces: map[string]cache.Config{"b": {}}})

			u := &unstructured.UnstructuredList{}
			u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
			if err := c.List(t.Context(), u); err != nil {
				t.Fatal(err)
			}
			if n := names(ptrs(u.Items)); !slices.Equal(n, []string{"b/p2", "b/p3"}) {
				t.Fatalf("unstructured List = %v", n)
			}
			for _, item := range u.Items {
				if has := len(item.GetManagedFields()) > 0; has != tc.keep {
					t.Fatalf("unstructured %s has managedFields: %v, want %v", item.GetName(), has, tc.keep)
				}
			}
			want := serverPod(t, srv, "b", "p2", tc.keep)
			var asPod corev1.Pod
			i := slices.IndexFunc(u.Items, func(item unstructured.Unstructured) bool { return item.GetName() == "p2" })
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Items[i].Object, &asPod); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&asPod, want) {
				t.Fatalf("unstructured pod:\n got %+v\nwant %+v", &asPod, want)
			}

			m := &metav1.PartialObjectMetadataList{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
			if err := c.List(t.Context(), m); err != nil {
				t.Fatal(err)
			}
			if n := names(ptrs(m.Items)); !slices.Equal(n, []string{"b/c2", "b/c3"}) {
				t.Fatalf("metadata List = %v", n)
			}
			for _, item := range m.Items {
				if has := len(item.ManagedFields) > 0; has != tc.keep {
					t.Fatalf("metadata %s has managedFields: %v, want %v", item.Name, has, tc.keep)
				}
				if item.Kind != "ConfigMap" {
					t.Fatalf("metadata %s has kind %q", item.Name, item.Kind)
				}
			}
			for _, ex := range []client.Object{u.Items[0].DeepCopy(), &m.Items[0]} {
				inf, err := c.GetInformer(t.Context(), ex)
				if err != nil {
					t.Fatal(err)
				}
				seen := make(chan schema.GroupVersionKind, 10)
				reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
					seen <- obj.(runtime.Object).GetObjectKind().GroupVersionKind()
				}})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := <-seen, ex.GetObjectKind().GroupVersionKind(); got != want {
					t.Fatalf("the %T informer's objects have kind %v, want %v", ex, got, want)
				}
				// controller-runtime's multi-namespace registration waits
				// on a goroutine until the handler has synced: let it
				// (with client-go's informer too, stopping first would
				// leave that goroutine waiting for ever).
				<-reg.HasSyncedChecker().Done()
			}
			fallbacks, built := r.get()
			if len(fallbacks) != 0 {
				t.Fatalf("fell back for %v, want none", fallbacks)
			}
			if want := []string{"*unstructured.Unstructured *cache.listwatchInformer", "*v1.PartialObjectMetadata *cache.listwatchInformer"}; !slices.Equal(built, want) {
				t.Fatalf("informers built: %v, want %v", built, want)
			}
		})
	}
}

// A caller's NewInformer builds the informers, over restsource's Source
// for built-in types: the pods it caches have no managedFields.
func TestCallersNewInformer(t *testing.T) {
	srv := newServer(t)
	var r recorder
	c := start(t, srv, crcache.NewWithOptions(r.options(nil)), cache.Options{NewInformer: toolscache.NewSharedIndexInformer})
	var got corev1.Pod
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "p0"}, &got); err != nil {
		t.Fatal(err)
	}
	if want := serverPod(t, srv, "a", "p0", false); !reflect.DeepEqual(&got, want) {
		t.Fatalf("Get:\n got %+v\nwant %+v", &got, want)
	}
	fallbacks, built := r.get()
	if want := []string{"*v1.Pod *cache.sharedIndexInformer"}; !slices.Equal(built, want) {
		t.Fatalf("informers built: %v, want %v", built, want)
	}
	if len(fallbacks) != 0 {
		t.Fatalf("fell back to controller-runtime's client for %v", fallbacks)
	}
}

// With a MetricsRegisterer, every informer of the cache is exported, one
// per namespace of a multi-namespace cache, named after its resource and
// namespace, its reflector's counters included.
func TestMetrics(t *testing.T) {
	srv := newServer(t)
	reg := prometheus.NewRegistry()
	c := start(t, srv, crcache.NewWithOptions(crcache.Options{MetricsRegisterer: reg}),
		cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}, "b": {}}})
	var list corev1.PodList
	if err := c.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := func(family string, value func(m *dto.Metric) float64) map[string]float64 {
		got := map[string]float64{}
		for _, f := range families {
			if f.GetName() != family {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "name" {
						got[l.GetValue()] += value(m)
					}
				}
			}
		}
		return got
	}
	if got, want := byName("informer_cache_objects", func(m *dto.Metric) float64 { return m.GetGauge().GetValue() }),
		map[string]float64{"pods/a": 2, "pods/b": 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("informer_cache_objects by name = %v, want %v", got, want)
	}
	// One list cycle each, the first (a streaming list: one watch).
	counter := func(m *dto.Metric) float64 { return m.GetCounter().GetValue() }
	for _, family := range []string{"informer_reflector_relists_total", "informer_reflector_watches_total"} {
		if got, want := byName(family, counter), map[string]float64{"pods/a": 1, "pods/b": 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s by name = %v, want %v", family, got, want)
		}
	}
}

// A StatusPage shows the cache's informers, synced, with their relists
// from the cache's metrics.
func TestStatusPage(t *testing.T) {
	srv := newServer(t)
	page := crcache.NewStatusPage(statuspage.Options{})
	c := start(t, srv, crcache.NewWithOptions(crcache.Options{StatusPage: page, MetricsRegisterer: prometheus.NewRegistry()}),
		cache.Options{DefaultNamespaces: map[string]cache.Config{"a": {}, "b": {}}})
	var list corev1.PodList
	if err := c.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	page.ServeHTTP(rec, httptest.NewRequest("GET", "/informers?format=json", nil))
	var rep statuspage.Report
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	var got []string
	for _, inf := range rep.Informers {
		got = append(got, fmt.Sprintf("%s synced=%t objects=%d relists=%v", inf.Name, inf.Synced, inf.Objects, inf.Relists))
	}
	want := []string{"pods/a synced=true objects=2 relists=map[None:1]", "pods/b synced=true objects=2 relists=map[None:1]"}
	if !slices.Equal(got, want) {
		t.Fatalf("status page shows %v, want %v", got, want)
	}
}

// As controller-runtime's own cache: it runs on every replica (a manager
// asks NeedLeaderElection of its cache), and a GetInformer whose context
// ends before the sync returns a timeout and no informer.
func TestLikeControllerRuntimesCache(t *testing.T) {
	srv := newServer(t)
	c := start(t, srv, crcache.New, cache.Options{})
	le, ok := c.(manager.LeaderElectionRunnable)
	if !ok || le.NeedLeaderElection() {
		t.Fatalf("the cache (%T) needs leader election: %v", c, ok)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	srv.Stall(fake.ConfigMaps().GVR) // nothing syncs
	defer srv.Unstall(fake.ConfigMaps().GVR)
	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	if inf != nil || !apierrors.IsTimeout(err) {
		t.Fatalf("GetInformer with a cancelled context = %v, %v; want nil and a timeout", inf, err)
	}
}
