package reflector_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/reflector"
)

// nameStore keeps pod names and signals when the first list has arrived.
type nameStore struct {
	mu     sync.Mutex
	names  map[string]bool
	synced chan struct{}
}

func (s *nameStore) set(p *corev1.Pod, present bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if present {
		s.names[p.Name] = true
	} else {
		delete(s.names, p.Name)
	}
	return nil
}

func (s *nameStore) Add(p *corev1.Pod) error    { return s.set(p, true) }
func (s *nameStore) Update(p *corev1.Pod) error { return s.set(p, true) }
func (s *nameStore) Delete(p *corev1.Pod) error { return s.set(p, false) }

func (s *nameStore) Replace(items []*corev1.Pod, rv string) error {
	for _, p := range items {
		_ = s.set(p, true)
	}
	close(s.synced)
	return nil
}

func (s *nameStore) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func Example() {
	// A source that lists two pods at resource version 7 and then watches.
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{
				ListMeta: metav1.ListMeta{ResourceVersion: "7"},
				Items: []corev1.Pod{
					{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "5"}},
					{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", ResourceVersion: "7"}},
				},
			}, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
	st := &nameStore{names: map[string]bool{}, synced: make(chan struct{})}
	r, err := reflector.New(reflector.Options[*corev1.Pod]{
		Source: reflector.FromListerWatcher(lw),
		Store:  st,
		Config: reflector.Config[*corev1.Pod]{WatchList: reflector.WatchListOff},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	<-st.synced
	fmt.Println("pods:", st)
	cancel()
	fmt.Println("run:", <-done)
	fmt.Println("synced:", r.HasSynced(), "at", r.LastSyncResourceVersion())
	// Output:
	// pods: db,web
	// run: <nil>
	// synced: true at 7
}
