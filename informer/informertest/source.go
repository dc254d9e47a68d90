package informertest

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// PartSource serves only the objects whose names are in its current part,
// as a sharded source (shard.Source) serves its member's: lists and watch
// events of other objects are left out (bookmarks pass). It says what it
// serves (Owns, which informer.Owner asks) and relists its informer when
// its part changes (RelistWith, which a factory or the test calls with
// informer.Informer.Relist). Safe for concurrent use.
type PartSource struct {
	cache.ListerWatcherWithContext
	mu     sync.Mutex
	part   map[string]bool
	relist func()
}

// NewPartSource returns a PartSource over lw serving names.
func NewPartSource(lw cache.ListerWatcherWithContext, names ...string) *PartSource {
	s := &PartSource{ListerWatcherWithContext: lw}
	s.Set(names...)
	return s
}

// Set makes names the part, without relisting.
func (s *PartSource) Set(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part = map[string]bool{}
	for _, n := range names {
		s.part[n] = true
	}
}

// Serve makes names the part and relists the informer given to RelistWith.
func (s *PartSource) Serve(names ...string) {
	s.Set(names...)
	s.mu.Lock()
	relist := s.relist
	s.mu.Unlock()
	if relist != nil {
		relist()
	}
}

// Wants reports whether name is in the part.
func (s *PartSource) Wants(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.part[name]
}

// Owns reports whether obj is in the part.
func (s *PartSource) Owns(obj metav1.Object) bool { return s.Wants(obj.GetName()) }

// RelistWith records the function Serve calls.
func (s *PartSource) RelistWith(relist func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.relist = relist
}

// Relisting reports whether RelistWith was called.
func (s *PartSource) Relisting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relist != nil
}

func (s *PartSource) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := s.ListerWatcherWithContext.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	for _, o := range items {
		if m, err := meta.Accessor(o); err == nil && s.Wants(m.GetName()) {
			kept = append(kept, o)
		}
	}
	return list, meta.SetList(list, kept)
}

func (s *PartSource) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := s.ListerWatcherWithContext.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		m, err := meta.Accessor(ev.Object)
		return ev, err != nil || ev.Type == watch.Bookmark || s.Wants(m.GetName())
	}), nil
}
