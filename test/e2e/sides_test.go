package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
)

const (
	libListwatch = "listwatch"
	libClientGo  = "client-go"
)

// side is one library's ConfigMap informer on one namespace, with counters
// around it. Both implementations are started on the same server and
// compared on the same figures.
type side interface {
	// lib is libListwatch or libClientGo.
	lib() string
	// synced reports whether the initial list reached the cache.
	synced() bool
	// state returns the cache as key -> resourceVersion.
	state() map[string]string
	// requests returns the counts of this side's own HTTP client.
	requests() *requestCounter
	// events returns what this side's handler has been called with.
	events() *eventCounter
	// lastError is the last list/watch error the library reported, or nil.
	lastError() error
	// resourceVersion is the informer's last synced resource version.
	resourceVersion() string
}

// eventCounter counts handler calls and keeps the handler's view: the
// objects it has been told exist, key -> resourceVersion. Both libraries'
// handlers feed one.
type eventCounter struct {
	adds, initialAdds, updates, deletes, deletesUnknown atomic.Int64

	mu sync.Mutex
	// view is what the handler was told, applied in call order. Guarded by mu.
	view map[string]string
}

func (e *eventCounter) set(ns, name, rv string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.view == nil {
		e.view = map[string]string{}
	}
	e.view[ns+"/"+name] = rv
}

func (e *eventCounter) drop(ns, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.view, ns+"/"+name)
}

// viewDiff says how the handler's view differs from want ("" if equal).
func (e *eventCounter) viewDiff(want map[string]string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	got := make(map[string]string, len(e.view))
	for k, v := range e.view {
		got[k] = v
	}
	return stateDiff(want, got)
}

// sideBase holds what both implementations share.
type sideBase struct {
	reqs *requestCounter
	ev   eventCounter
	// errMu guards err, the last list/watch error reported, and errLog,
	// every one with the time it was reported.
	errMu  sync.Mutex
	err    error
	errLog []string
	// born is when the side was started; errLog times are relative to it.
	born time.Time
}

func (b *sideBase) requests() *requestCounter { return b.reqs }
func (b *sideBase) events() *eventCounter     { return &b.ev }
func (b *sideBase) lastError() error {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return b.err
}
func (b *sideBase) setError(err error) {
	b.errMu.Lock()
	b.err = err
	b.errLog = append(b.errLog, fmt.Sprintf("%v %v", time.Since(b.born).Round(time.Millisecond), err))
	b.errMu.Unlock()
}

// errorLog returns every reported error with its time since the start.
func (b *sideBase) errorLog() []string {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return append([]string(nil), b.errLog...)
}

// configMapLW is a client-go ListWatch over one namespace's ConfigMaps.
func configMapLW(cs kubernetes.Interface, ns string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().ConfigMaps(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		},
	}
}

// paginatedListwatch makes listwatch's informer list page by page.
func paginatedListwatch(o *informer.Options[*corev1.ConfigMap]) {
	o.Reflector.WatchList = reflector.WatchListOff
}

// runUntilCleanup runs fn on a goroutine of its own with a context that is
// cancelled when the current spec (or Ordered container) cleans up; the
// cleanup waits for fn to return, so goleak sees nothing left behind.
func runUntilCleanup(fn func(ctx context.Context)) {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		fn(ctx)
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(30 * time.Second).Should(BeClosed())
	})
}

// --- listwatch ---

// lwSide is listwatch's informer.
type lwSide struct {
	sideBase
	inf *informer.Informer[*corev1.ConfigMap]
	// relists counts the reflector's list cycles by cause.
	relists *relistMetrics
}

func (s *lwSide) lib() string  { return libListwatch }
func (s *lwSide) synced() bool { return s.inf.HasSynced() }
func (s *lwSide) resourceVersion() string {
	return s.inf.LastSyncResourceVersion()
}
func (s *lwSide) state() map[string]string {
	out := map[string]string{}
	for _, cm := range s.inf.Reader().List() {
		out[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return out
}

// startListwatch starts listwatch's informer on ns with cfg's credentials and
// a counting handler; it stops when the spec cleans up. tweak, if not nil,
// adjusts the options before New.
func startListwatch(cfg *rest.Config, ns string, tweak func(*informer.Options[*corev1.ConfigMap])) *lwSide {
	GinkgoHelper()
	ccfg, reqs := counted(cfg)
	cs := kubernetes.NewForConfigOrDie(ccfg)
	s := &lwSide{sideBase: sideBase{reqs: reqs, born: time.Now()}, relists: &relistMetrics{}}
	opts := informer.Options[*corev1.ConfigMap]{
		Name:   "e2e-configmaps",
		Source: reflector.FromClient[*corev1.ConfigMapList](cs.CoreV1().ConfigMaps(ns)),
		WatchErrorHandler: func(_ context.Context, err error) {
			s.setError(err)
		},
	}
	opts.Reflector.Metrics = s.relists
	if tweak != nil {
		tweak(&opts)
	}
	inf, err := informer.New(opts)
	Expect(err).NotTo(HaveOccurred())
	s.inf = inf
	_, err = inf.AddHandler(lwViewHandler(&s.ev), informer.HandlerOptions{})
	Expect(err).NotTo(HaveOccurred())
	runUntilCleanup(func(ctx context.Context) {
		Expect(inf.Run(ctx)).To(Succeed())
	})
	return s
}

// relistMetrics is a reflector.Metrics that counts list cycles by cause.
type relistMetrics struct {
	reflector.NoopMetrics
	mu sync.Mutex
	// causes counts Relist calls by cause; ReasonNone is the first list.
	causes map[reflector.Reason]int
}

func (m *relistMetrics) Relist(cause reflector.Reason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.causes == nil {
		m.causes = map[reflector.Reason]int{}
	}
	m.causes[cause]++
}

// snapshot returns the counts by cause name.
func (m *relistMetrics) snapshot() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for c, n := range m.causes {
		out[c.String()] = n
	}
	return out
}

// count returns how many list cycles had cause.
func (m *relistMetrics) count(cause reflector.Reason) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.causes[cause]
}

// --- client-go ---

// cgSide is client-go's cache.NewSharedIndexInformer.
type cgSide struct {
	sideBase
	inf cache.SharedIndexInformer
}

func (s *cgSide) lib() string  { return libClientGo }
func (s *cgSide) synced() bool { return s.inf.HasSynced() }
func (s *cgSide) resourceVersion() string {
	return s.inf.LastSyncResourceVersion()
}
func (s *cgSide) state() map[string]string {
	out := map[string]string{}
	for _, o := range s.inf.GetStore().List() {
		cm := o.(*corev1.ConfigMap)
		out[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return out
}

// startClientGo starts client-go's shared index informer on ns with cfg's
// credentials and a counting handler; it stops when the spec cleans up.
// paginated turns client-go's streaming list off for this informer only.
func startClientGo(cfg *rest.Config, ns string, paginated bool) *cgSide {
	GinkgoHelper()
	ccfg, reqs := counted(cfg)
	cs := kubernetes.NewForConfigOrDie(ccfg)
	s := &cgSide{sideBase: sideBase{reqs: reqs, born: time.Now()}}
	var lw cache.ListerWatcher = configMapLW(cs, ns)
	if paginated {
		lw = objects.NoWatchList(configMapLW(cs, ns))
	}
	s.inf = cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	Expect(s.inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		s.setError(err)
	})).To(Succeed())
	_, err := s.inf.AddEventHandler(detailedCounter(&s.ev))
	Expect(err).NotTo(HaveOccurred())
	runUntilCleanup(s.inf.RunWithContext)
	return s
}

// detailedCounter is a client-go handler that counts its calls in c.
func detailedCounter(c *eventCounter) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			c.adds.Add(1)
			if initial {
				c.initialAdds.Add(1)
			}
			cm := obj.(*corev1.ConfigMap)
			c.set(cm.Namespace, cm.Name, cm.ResourceVersion)
		},
		UpdateFunc: func(_, obj any) {
			c.updates.Add(1)
			cm := obj.(*corev1.ConfigMap)
			c.set(cm.Namespace, cm.Name, cm.ResourceVersion)
		},
		DeleteFunc: func(obj any) {
			c.deletes.Add(1)
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				c.deletesUnknown.Add(1)
				obj = tomb.Obj
			}
			cm := obj.(*corev1.ConfigMap)
			c.drop(cm.Namespace, cm.Name)
		},
	}
}

// lwViewHandler is a listwatch handler that keeps c's counts and view.
func lwViewHandler(c *eventCounter) informer.Handler[*corev1.ConfigMap] {
	return informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, initial bool) {
			c.adds.Add(1)
			if initial {
				c.initialAdds.Add(1)
			}
			c.set(cm.Namespace, cm.Name, cm.ResourceVersion)
		},
		UpdateFunc: func(_, cm *corev1.ConfigMap) {
			c.updates.Add(1)
			c.set(cm.Namespace, cm.Name, cm.ResourceVersion)
		},
		DeleteFunc: func(cm *corev1.ConfigMap, unknown bool) {
			c.deletes.Add(1)
			if unknown {
				c.deletesUnknown.Add(1)
			}
			c.drop(cm.Namespace, cm.Name)
		},
	}
}

// startBoth starts listwatch's and client-go's informers side by side.
func startBoth(cfg *rest.Config, ns string) (*lwSide, *cgSide) {
	GinkgoHelper()
	return startListwatch(cfg, ns, nil), startClientGo(cfg, ns, false)
}
