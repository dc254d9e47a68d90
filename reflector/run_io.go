package reflector

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// list performs one list request and delivers its page or error.
func (s *shell[T]) list(gen uint64, e List) {
	defer s.wg.Done()
	obj, err := s.r.src.ListWithContext(s.ctx, e.Options)
	in := toPage(obj, err)
	select {
	case s.results <- result{gen: gen, in: in}:
	case <-s.ctx.Done():
	}
}

// toPage turns a list response into a ListPage, or a ListFailed carrying a
// decode error when the response is not a list.
func toPage(obj runtime.Object, err error) Input {
	if err != nil {
		return ListFailed{Err: err}
	}
	if obj == nil {
		return ListFailed{Err: decodeError{errors.New("nil list")}}
	}
	acc, err := meta.ListAccessor(obj)
	if err != nil {
		return ListFailed{Err: decodeError{fmt.Errorf("list %T: %w", obj, err)}}
	}
	items, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return ListFailed{Err: decodeError{fmt.Errorf("items of %T: %w", obj, err)}}
	}
	return ListPage{Items: items, ResourceVersion: acc.GetResourceVersion(), Continue: acc.GetContinue()}
}

// watch opens one watch and forwards its events until it closes or ctx (the
// watch's own context, cancelled by StopWatch and by the end of Run) is
// done; a request still opening is abandoned too. It always stops the watch
// it opened.
func (s *shell[T]) watch(ctx context.Context, gen uint64, e Watch) {
	defer s.wg.Done()
	w, err := s.r.src.WatchWithContext(ctx, e.Options)
	if err == nil && w == nil {
		err = decodeError{errors.New("source returned neither a watch nor an error")}
	}
	if err != nil {
		s.send(ctx, gen, WatchFailed{Err: err})
		return
	}
	defer w.Stop()
	if !s.send(ctx, gen, WatchOpened{}) {
		return
	}
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				s.send(ctx, gen, WatchClosed{})
				return
			}
			if !s.send(ctx, gen, WatchEvent{Event: ev}) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// send delivers a watch input unless the watch was stopped meanwhile.
func (s *shell[T]) send(ctx context.Context, gen uint64, in Input) bool {
	select {
	case s.results <- result{watch: true, gen: gen, in: in}:
		return true
	case <-ctx.Done():
		return false
	}
}
