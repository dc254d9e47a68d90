package reflector

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
)

// signalStore counts store calls and closes synced at the first Replace and
// reached once n watch events have been applied. It wraps either store.
type signalStore struct {
	synced, reached chan struct{}
	n               int64
	events          atomic.Int64
}

func newSignalStore(n int) *signalStore {
	return &signalStore{synced: make(chan struct{}), reached: make(chan struct{}), n: int64(n)}
}

func (s *signalStore) replaced() {
	select {
	case <-s.synced:
	default:
		close(s.synced)
	}
}

func (s *signalStore) event() {
	if s.events.Add(1) == s.n {
		close(s.reached)
	}
}

// lwSink is the listwatch side: a Store[*corev1.Pod] over signalStore.
type lwSink struct{ *signalStore }

func (s lwSink) Add(*corev1.Pod) error               { s.event(); return nil }
func (s lwSink) Update(*corev1.Pod) error            { s.event(); return nil }
func (s lwSink) Delete(*corev1.Pod) error            { s.event(); return nil }
func (s lwSink) Replace([]*corev1.Pod, string) error { s.replaced(); return nil }

// cgSink is the client-go side: a cache.ReflectorStore over signalStore.
type cgSink struct{ *signalStore }

func (s cgSink) Add(any) error               { s.event(); return nil }
func (s cgSink) Update(any) error            { s.event(); return nil }
func (s cgSink) Delete(any) error            { s.event(); return nil }
func (s cgSink) Replace([]any, string) error { s.replaced(); return nil }
func (s cgSink) Resync() error               { return nil }

func benchServer(b *testing.B, pods int) (*fake.Server, *fake.ListerWatcher) {
	srv, err := fake.NewServer(fake.Options{Resources: []fake.Resource{fake.Pods()}, HistorySize: 1 << 20,
		WatchBufferSize: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	for i := range pods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p" + strconv.Itoa(i)}}
		if _, err := srv.Create(b.Context(), p); err != nil {
			b.Fatal(err)
		}
	}
	return srv, srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR, Namespace: "ns"})
}

// startSubject starts listwatch's or client-go's reflector on lw into sink.
func startSubject(ctx context.Context, b *testing.B, which string, lw *fake.ListerWatcher, sink *signalStore) <-chan struct{} {
	done := make(chan struct{})
	if which == "client-go" { // streaming list, as client-go v0.37 does by default
		r := cache.NewReflectorWithOptions(lw, &corev1.Pod{}, cgSink{sink}, cache.ReflectorOptions{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		return done
	}
	cfg := Config[*corev1.Pod]{} // streaming list (auto)
	if which == "listwatch-paged" {
		cfg.WatchList = WatchListOff
	}
	r, err := New(Options[*corev1.Pod]{Source: lw, Store: lwSink{sink}, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	go func() { defer close(done); _ = r.Run(ctx) }()
	return done
}

// BenchmarkInitialSync: list 5,000 pods from the fake apiserver and hand
// them to the store, from Run to the first Replace. "listwatch" and
// "client-go" both use a streaming list; "listwatch-paged" pages by 500.
func BenchmarkInitialSync(b *testing.B) {
	_, lw := benchServer(b, 5000)
	for _, which := range []string{"listwatch", "listwatch-paged", "client-go"} {
		b.Run(which, func(b *testing.B) {
			for range b.N {
				ctx, cancel := context.WithCancel(b.Context())
				sink := newSignalStore(-1)
				done := startSubject(ctx, b, which, lw, sink)
				<-sink.synced
				cancel()
				<-done
			}
		})
	}
}

// BenchmarkWatchEvents: apply b.N watch events (updates of 100 pods).
func BenchmarkWatchEvents(b *testing.B) {
	for _, which := range []string{"listwatch", "client-go"} {
		b.Run(which, func(b *testing.B) {
			srv, lw := benchServer(b, 100)
			ctx, cancel := context.WithCancel(b.Context())
			defer cancel()
			sink := newSignalStore(b.N)
			done := startSubject(ctx, b, which, lw, sink)
			<-sink.synced
			b.ResetTimer()
			for i := range b.N {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p" + strconv.Itoa(i%100),
					Labels: map[string]string{"i": fmt.Sprint(i)}}}
				if _, err := srv.Update(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			<-sink.reached
			b.StopTimer()
			cancel()
			<-done
		})
	}
}
