package reflector

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// list performs one list request with ctx, its own context (cancelled
// once it is answered, abandoned or the Run ends), and delivers its page or
// error.
func (s *shell[T]) list(ctx context.Context, gen uint64, e List) {
	defer s.wg.Done()
	obj, err := s.r.src.ListWithContext(ctx, e.Options)
	select {
	case s.lists <- result{gen: gen, in: toPage(obj, err)}:
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
	items, err := meta.ExtractList(obj) // copied as the store takes them: see ListPage.Shared
	if err != nil {
		return ListFailed{Err: decodeError{fmt.Errorf("items of %T: %w", obj, err)}}
	}
	return ListPage{Items: items, ResourceVersion: acc.GetResourceVersion(), Continue: acc.GetContinue(), Shared: sharedItems(obj)}
}

// sharedItems reports whether meta.ExtractList hands out pointers into
// list's own array: its Items are structs that are not objects themselves
// (a typed list's, an UnstructuredList's), where meta.ExtractListWithAlloc
// would copy each.
func sharedItems(list runtime.Object) bool {
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return false
	}
	t := reflect.TypeOf(ptr)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Slice {
		return false
	}
	e := t.Elem().Elem()
	return e.Kind() == reflect.Struct && e != rawExtensionType && !e.Implements(objectType)
}

var (
	rawExtensionType = reflect.TypeFor[runtime.RawExtension]()
	objectType       = reflect.TypeFor[runtime.Object]()
)

// ownCopies replaces each item, a pointer into a list response's array
// (ListPage.Shared), by a shallow copy of its own, as
// meta.ExtractListWithAlloc makes them: no kept object pins the array.
func ownCopies[T any](items []T) {
	for i, it := range items {
		v := reflect.ValueOf(it)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			continue
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		if t, ok := c.Interface().(T); ok {
			items[i] = t
		}
	}
}

// open opens one watch with ctx, the watch's own context (cancelled when
// the watch is stopped, abandoned or the Run ends), and delivers it. A watch
// that cannot be delivered is stopped here.
func (s *shell[T]) open(ctx context.Context, gen uint64, e Watch) {
	defer s.wg.Done()
	w, err := s.r.src.WatchWithContext(ctx, e.Options)
	if err == nil && w == nil {
		err = decodeError{errors.New("source returned neither a watch nor an error")}
	}
	res := result{gen: gen, in: WatchFailed{Err: err}}
	if err == nil {
		res = result{gen: gen, in: WatchOpened{}, w: w}
	}
	select {
	case s.opens <- res:
	case <-s.ctx.Done():
		if w != nil {
			w.Stop()
		}
	}
}

func (s *shell[T]) apply(e Apply[T]) {
	var err error
	switch e.Type {
	case watch.Added:
		err = s.r.store.Add(e.Object)
	case watch.Modified:
		err = s.r.store.Update(e.Object)
	case watch.Deleted:
		err = s.r.store.Delete(e.Object)
	}
	if err != nil {
		s.r.m.cfg.Metrics.Error(ReasonStore)
		s.logger.Error(err, "Store refused a watch event", "type", e.Type, "object", klog.KObj(e.Object))
		if s.r.onError != nil {
			s.r.onError(s.ctx, ReasonStore, err)
		}
	}
}

func (s *shell[T]) report(e ReportError) {
	if e.Quiet {
		s.logger.V(4).Info("List or watch problem worked around", "reason", e.Reason, "err", e.Err)
		return
	}
	switch e.Reason {
	case ReasonExpired, ReasonWatchIdle, ReasonShortWatch, ReasonConnection, ReasonTooManyRequests, ReasonStreamIncomplete:
		s.logger.V(2).Info("Watch or list interrupted", "reason", e.Reason, "err", e.Err)
	default:
		s.logger.Error(e.Err, "List or watch failed", "reason", e.Reason)
	}
	if s.r.onError != nil {
		s.r.onError(s.ctx, e.Reason, e.Err)
	}
}
