package retrywatcher

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// logServer is a minimal event-log apiserver for shell tests: a history of
// events with RVs, a compaction floor, scripted failures and stream cuts.
// (fake/ is the full-featured one; this keeps these tests self-contained.)
type logServer struct {
	mu sync.Mutex
	// events is the history, in RV order; events[i] has RV base+i+1.
	events []watch.Event
	base   uint64
	// compacted: a watch from an RV below it gets 410.
	compacted uint64
	// failNext are errors returned by the next watch calls, in order.
	failNext []error
	// cutAfter closes each stream after this many events (0: never).
	cutAfter int
	// replay makes each stream start this many events before the requested
	// RV, like a misbehaving server (0: exact).
	replay int
	// endWith, when set, is sent after the stream's events, which then end.
	endWith *watch.Event
	// watchRVs records the RV of every watch call.
	watchRVs []string
	// wg tracks stream goroutines so tests end with none running.
	wg sync.WaitGroup
}

func cm(name string, rv uint64) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: strconv.FormatUint(rv, 10)}}
}

// record appends n MODIFIED events for objects o0..o9, returning their RVs.
func (s *logServer) record(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		rv := s.base + uint64(len(s.events)) + 1
		s.events = append(s.events, watch.Event{Type: watch.Modified, Object: cm(fmt.Sprintf("o%d", rv%10), rv)})
	}
}

func (s *logServer) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchRVs = append(s.watchRVs, opts.ResourceVersion)
	if len(s.failNext) > 0 {
		err := s.failNext[0]
		s.failNext = s.failNext[1:]
		return nil, err
	}
	from, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest("bad rv")
	}
	if from < s.compacted {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.compacted))
	}
	start := max(int(from-s.base)-s.replay, 0)
	evs := append([]watch.Event(nil), s.events[min(start, len(s.events)):]...)
	if s.cutAfter > 0 && len(evs) > s.cutAfter {
		evs = evs[:s.cutAfter]
	}
	end := s.endWith
	ch := make(chan watch.Event)
	w := watch.NewProxyWatcher(ch)
	s.wg.Go(func() {
		defer close(ch)
		for _, ev := range evs {
			select {
			case ch <- ev:
			case <-w.StopChan():
				return
			}
		}
		if end != nil {
			select {
			case ch <- *end:
			case <-w.StopChan():
			}
			return
		}
		// Stay open (like an idle watch) unless cut.
		if s.cutAfter == 0 {
			<-w.StopChan()
		}
	})
	return w, nil
}

// ListWithContext lists the latest state of every object at the newest RV.
func (s *logServer) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	latest := map[string]*corev1.ConfigMap{}
	for _, ev := range s.events {
		c := ev.Object.(*corev1.ConfigMap)
		if ev.Type == watch.Deleted {
			delete(latest, c.Name)
		} else {
			latest[c.Name] = c
		}
	}
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(s.base+uint64(len(s.events)), 10)}}
	for _, c := range latest {
		list.Items = append(list.Items, *c)
	}
	return list, nil
}

var (
	gr          = schema.GroupResource{Resource: "configmaps"}
	metaListAll = metav1.ListOptions{}
)
