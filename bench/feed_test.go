package bench

import (
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// feedLW is a pre-decoded source shared by both libraries: List serves
// items in pages of opts.Limit (continue = offset), a streaming watch
// (sendInitialEvents) opens with an ADDED event per item and the
// initial-events-end bookmark, and every watch then forwards the live
// events the benchmark sends on ch. With noStream it declares that it
// does not support streaming lists, so both informers list and watch.
type feedLW struct {
	noStream bool
	// unpaged makes List ignore opts.Limit: every list is one page, as a
	// client-go ListWatch over a source that does not paginate returns
	// it (a kube-apiserver serving resourceVersion=0 from its watch cache may
	// ignore the limit too).
	unpaged bool
	ch      chan watch.Event

	mu    sync.Mutex
	items []corev1.Pod // guarded by mu; replaced by setItems
	rv    string       // guarded by mu; the list resource version

	lists, watches atomic.Int64
	// listedAt and watchedAt are when the last list (its first page) and
	// the last watch were asked for, in Unix nanoseconds.
	listedAt, watchedAt atomic.Int64
}

func newFeed(items []corev1.Pod, rv string, noStream bool) *feedLW {
	return &feedLW{noStream: noStream, ch: make(chan watch.Event, 1024), items: items, rv: rv}
}

func (f *feedLW) IsWatchListSemanticsUnSupported() bool { return f.noStream }

func (f *feedLW) setItems(items []corev1.Pod, rv string) {
	f.mu.Lock()
	f.items, f.rv = items, rv
	f.mu.Unlock()
}

func (f *feedLW) snapshot() ([]corev1.Pod, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.items, f.rv
}

func (f *feedLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	f.lists.Add(1)
	if opts.Continue == "" {
		f.listedAt.Store(time.Now().UnixNano())
	}
	items, rv := f.snapshot()
	from, _ := strconv.Atoi(opts.Continue)
	to := len(items)
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	if opts.Limit > 0 && from+int(opts.Limit) < to && !f.unpaged {
		to = from + int(opts.Limit)
		l.Continue = strconv.Itoa(to)
		l.RemainingItemCount = ptr.To(int64(len(items) - to))
	}
	l.Items = items[from:to:to]
	return l, nil
}

func (f *feedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	f.watches.Add(1)
	f.watchedAt.Store(time.Now().UnixNano())
	if opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
		return watch.NewProxyWatcher(f.ch), nil
	}
	items, rv := f.snapshot()
	w := &streamWatch{out: make(chan watch.Event), stop: make(chan struct{})}
	go w.run(items, rv, f.ch)
	return w, nil
}

// streamWatch is a streaming-list watch: initial events, the bookmark,
// then live events.
type streamWatch struct {
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *streamWatch) ResultChan() <-chan watch.Event { return w.out }
func (w *streamWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }

func (w *streamWatch) send(e watch.Event) bool {
	select {
	case w.out <- e:
		return true
	case <-w.stop:
		return false
	}
}

func (w *streamWatch) run(items []corev1.Pod, rv string, live <-chan watch.Event) {
	defer close(w.out)
	for i := range items {
		if !w.send(watch.Event{Type: watch.Added, Object: &items[i]}) {
			return
		}
	}
	bm := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	if !w.send(watch.Event{Type: watch.Bookmark, Object: bm}) {
		return
	}
	for {
		select {
		case e := <-live:
			if !w.send(e) {
				return
			}
		case <-w.stop:
			return
		}
	}
}

// spanProfile starts a CPU profile of the measured span only (not the
// corpus, not the initial sync) when BENCH_SPAN_CPUPROFILE names a file;
// the returned function stops it. Each call overwrites the file, so the
// profile is of the last round run (use a filter like SteadyState/listwatch);
// suffix, when given, is appended to the file name.
func spanProfile(b *testing.B, suffix ...string) func() {
	path := os.Getenv("BENCH_SPAN_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	path += strings.Join(suffix, "")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// rvStamper gives the objects of a cycling feed increasing resource
// versions, as a real watch does: listwatch's reflector relists when a
// resource version goes back within a watch (issue 27), and a feed that
// cycles through pre-built objects would send them back. prepare makes the
// strings of the next n events before the timed loop; stamp sets the next
// one on an event's object just before it is sent (a store, no
// allocation). An object sent again in a later cycle has long been
// replaced in the cache, so rewriting its resource version races with
// nothing the informers still read.
type rvStamper struct {
	last uint64
	rvs  []string
	i    int
}

// rvStampBase is above every resource version the corpus and the feeds'
// lists carry.
const rvStampBase = 10_000_000

func (s *rvStamper) prepare(n int) {
	if s.last < rvStampBase {
		s.last = rvStampBase
	}
	s.rvs, s.i = s.rvs[:0], 0
	for range n {
		s.last++
		s.rvs = append(s.rvs, strconv.FormatUint(s.last, 10))
	}
}

func (s *rvStamper) stamp(ev watch.Event) watch.Event {
	ev.Object.(*corev1.Pod).ResourceVersion = s.rvs[s.i]
	s.i++
	return ev
}
