package integration

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/restsource"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const timeout = 60 * time.Second

var contentTypes = []string{restsource.ContentTypeProtobuf, restsource.ContentTypeJSON}

type env struct {
	t   *testing.T
	srv *testapiserver.Server
	cfg *rest.Config
	cs  kubernetes.Interface
	ns  string
}

func (e *env) clientset(ct string) kubernetes.Interface {
	cfg := rest.CopyConfig(e.cfg)
	cfg.ContentType = ct
	return kubernetes.NewForConfigOrDie(cfg)
}

func (e *env) source(ct string) *restsource.Source[*corev1.ConfigMap, corev1.ConfigMap] {
	src, err := restsource.New[*corev1.ConfigMap](restsource.Options{Client: e.clientset(ct).CoreV1().RESTClient(),
		Resource: "configmaps", Namespace: e.ns, ContentType: ct})
	if err != nil {
		e.t.Fatal(err)
	}
	return src
}

func (e *env) create(ctx context.Context, name string) *corev1.ConfigMap {
	cm, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"app": "x"}}, Data: map[string]string{"k": name}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return cm
}

// state is the server's content: name → resource version.
func (e *env) state(ctx context.Context) map[string]string {
	l, err := e.cs.CoreV1().ConfigMaps(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, cm := range l.Items {
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

func TestAgainstKubeAPIServer(t *testing.T) {
	ctx := t.Context()
	srv, err := testapiserver.Start(ctx, t, testapiserver.Options{EtcdCompactionInterval: time.Second, DisableWatchCache: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv, cfg: srv.AdminConfig(), cs: kubernetes.NewForConfigOrDie(srv.AdminConfig()), ns: "restsource"}
	if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var first *corev1.ConfigMap
	for i := range 30 {
		cm := e.create(ctx, fmt.Sprintf("cm-%02d", i))
		if first == nil {
			first = cm
		}
	}
	t.Run("list", func(t *testing.T) { testList(t, e) })
	t.Run("watch", func(t *testing.T) { testWatch(t, e) })
	t.Run("informers", func(t *testing.T) { testInformers(t, e) })
	t.Run("expired", func(t *testing.T) { testExpired(t, e, first.ResourceVersion) })
	t.Run("kinds", func(t *testing.T) { testKinds(t, e) })
}

// testList: whole lists and pages equal the clientset's.
func testList(t *testing.T, e *env) {
	for _, ct := range contentTypes {
		for _, opts := range []metav1.ListOptions{{}, {Limit: 7}, {LabelSelector: "app=x", ResourceVersion: "0"}} {
			want, err := e.clientset(ct).CoreV1().ConfigMaps(e.ns).List(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := e.source(ct).ListWithContext(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			got := obj.(*metav1.List)
			// A quorum read (RV "") answers at the latest RV, and a read at
			// RV "0" at the watch cache's; the server's own writes (its
			// identity leases, in other namespaces) move both between the
			// two lists: then only "not older" holds.
			sameRV := got.ResourceVersion == want.ResourceVersion
			if opts.ResourceVersion == "" || opts.ResourceVersion == "0" {
				g, _ := strconv.ParseUint(got.ResourceVersion, 10, 64)
				w, _ := strconv.ParseUint(want.ResourceVersion, 10, 64)
				sameRV = g >= w && w > 0
			}
			if !sameRV || (got.Continue == "") != (want.Continue == "") || len(got.Items) != len(want.Items) {
				t.Fatalf("%s %+v: list %s/%q/%d, clientset's %s/%q/%d", ct, opts, got.ResourceVersion, got.Continue, len(got.Items),
					want.ResourceVersion, want.Continue, len(want.Items))
			}
			for i := range got.Items {
				if !apiequality.Semantic.DeepEqual(got.Items[i].Object, &want.Items[i]) {
					t.Errorf("%s: item %d differs: %v vs %v", ct, i, got.Items[i].Object, &want.Items[i])
				}
			}
		}
	}
}

// testWatch: a streaming list (sendInitialEvents) gives the same ADDED
// events and the same initial-events-end bookmark through restsource as
// through the clientset.
func testWatch(t *testing.T, e *env) {
	opts := metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	for _, ct := range contentTypes {
		cw, err := e.clientset(ct).CoreV1().ConfigMaps(e.ns).Watch(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		want := untilBookmark(t, cw)
		rw, err := e.source(ct).WatchWithContext(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		got := untilBookmark(t, rw)
		if len(got) != len(want) {
			t.Fatalf("%s: %d events, clientset %d", ct, len(got), len(want))
		}
		for i := range got {
			if got[i].Type != want[i].Type || !apiequality.Semantic.DeepEqual(got[i].Object, want[i].Object) {
				// the bookmarks' RVs may differ (each watch reads its own), their shape may not
				if got[i].Type == watch.Bookmark && want[i].Type == watch.Bookmark {
					continue
				}
				t.Errorf("%s: event %d: %s %v, clientset %s %v", ct, i, got[i].Type, got[i].Object, want[i].Type, want[i].Object)
			}
		}
	}
}

// untilBookmark collects events up to the initial-events-end bookmark
// (untilInitialEnd), checks that it carries the annotation, and stops w.
func untilBookmark(t *testing.T, w watch.Interface) []watch.Event {
	out := untilInitialEnd(t, w)
	if cm := out[len(out)-1].Object.(*corev1.ConfigMap); cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("bookmark without the annotation: %v", cm)
	}
	return out
}

// testInformers: a listwatch informer and a client-go informer, each on a
// restsource of each content type, follow creates, updates and deletes and
// end up equal to the server.
func testInformers(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	type snap func() map[string]string
	var snaps []snap
	var names []string
	done := make(chan struct{})
	var running int
	for _, ct := range contentTypes {
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Source: reflector.FromListerWatcher(e.source(ct))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc:    func(*corev1.ConfigMap, bool) { poke() },
			UpdateFunc: func(_, _ *corev1.ConfigMap) { poke() },
			DeleteFunc: func(*corev1.ConfigMap, bool) { poke() },
		}, informer.HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		running++
		go func() { _ = inf.Run(ctx); done <- struct{}{} }()
		snaps = append(snaps, func() map[string]string {
			out := map[string]string{}
			for _, cm := range inf.Reader().List() {
				out[cm.Name] = cm.ResourceVersion
			}
			return out
		})
		names = append(names, "listwatch/"+ct)

		cinf := cache.NewSharedIndexInformer(e.source(ct), &corev1.ConfigMap{}, 0, cache.Indexers{})
		if _, err := cinf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { poke() }, UpdateFunc: func(_, _ any) { poke() }, DeleteFunc: func(any) { poke() },
		}); err != nil {
			t.Fatal(err)
		}
		running++
		go func() { cinf.RunWithContext(ctx); done <- struct{}{} }()
		snaps = append(snaps, func() map[string]string {
			out := map[string]string{}
			for _, o := range cinf.GetStore().List() {
				cm := o.(*corev1.ConfigMap)
				out[cm.Name] = cm.ResourceVersion
			}
			return out
		})
		names = append(names, "client-go/"+ct)
	}
	defer func() {
		cancel()
		for range running {
			<-done
		}
	}()
	converge := func(what string) {
		want := e.state(ctx)
		deadline := time.After(timeout)
		for {
			ok := true
			for i, s := range snaps {
				if got := s(); !maps.Equal(got, want) {
					ok = false
					_ = i
				}
			}
			if ok {
				return
			}
			select {
			case <-changed:
			case <-deadline:
				for i, s := range snaps {
					if got := s(); !maps.Equal(got, want) {
						t.Errorf("%s: %s has %d objects, not the server's %d: %v vs %v", what, names[i], len(got), len(want), got, want)
					}
				}
				t.FailNow()
			}
		}
	}
	converge("initial sync")
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	for i := range 10 {
		cm, err := cms.Get(ctx, fmt.Sprintf("cm-%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["k"] = "updated-" + strconv.Itoa(i)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 10; i < 15; i++ {
		if err := cms.Delete(ctx, fmt.Sprintf("cm-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 30; i < 35; i++ {
		e.create(ctx, fmt.Sprintf("cm-%02d", i))
	}
	converge("after writes")
}

// testExpired: after etcd compacts past rv, an exact list at rv is 410
// Expired and a watch from rv gets etcd's in-stream 410 ERROR, exactly as
// through the clientset.
func testExpired(t *testing.T, e *env, rv string) {
	ctx := t.Context()
	marker := e.create(ctx, "compaction-marker")
	m, _ := strconv.ParseUint(marker.ResourceVersion, 10, 64)
	probe := metav1.ListOptions{ResourceVersion: strconv.FormatUint(m-1, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	src := e.source(restsource.ContentTypeProtobuf)
	tick := time.NewTicker(200 * time.Millisecond) // waiting for the server's compactor, not for our code
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		_, err := src.ListWithContext(ctx, probe)
		if apierrors.IsResourceExpired(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("not compacted")
		}
	}
	for _, ct := range contentTypes {
		old := metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
		_, want := e.clientset(ct).CoreV1().ConfigMaps(e.ns).List(ctx, old)
		_, got := e.source(ct).ListWithContext(ctx, old)
		if !apierrors.IsResourceExpired(got) || got.Error() != want.Error() {
			t.Errorf("%s: list at a compacted RV: %v; clientset: %v", ct, got, want)
		}
		cw, err := e.clientset(ct).CoreV1().ConfigMaps(e.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		wantEv := first(t, cw)
		rw, err := e.source(ct).WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		gotEv := first(t, rw)
		if gotEv.Type != watch.Error || !apiequality.Semantic.DeepEqual(gotEv, wantEv) {
			t.Errorf("%s: watch from a compacted RV: %s %v; clientset: %s %v", ct, gotEv.Type, gotEv.Object, wantEv.Type, wantEv.Object)
		}
		if st, ok := gotEv.Object.(*metav1.Status); !ok || st.Code != 410 {
			t.Errorf("%s: not a 410 Status: %v", ct, gotEv.Object)
		}
	}
}

func first(t *testing.T, w watch.Interface) watch.Event {
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed without an event")
		}
		return ev
	case <-time.After(timeout):
		t.Fatal("no event")
	}
	return watch.Event{}
}
