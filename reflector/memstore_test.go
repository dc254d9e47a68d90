package reflector

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/listwatch/listwatch/store"
)

// memStore is a naive Store: a map from key to object, plus a log of the
// calls it received. Safe for concurrent use.
type memStore[T store.Object] struct {
	mu       sync.Mutex
	objs     map[string]T
	log      []string
	progress string // last UpdateResourceVersion
	failNext bool   // the next Replace fails
}

func newMemStore[T store.Object]() *memStore[T] { return &memStore[T]{objs: map[string]T{}} }

func (s *memStore[T]) put(op string, obj T, del bool) error {
	k, err := store.NamespacedKey(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf("%s %s@%s", op, k, obj.GetResourceVersion()))
	if del {
		delete(s.objs, k)
	} else {
		s.objs[k] = obj
	}
	return nil
}

func (s *memStore[T]) Add(obj T) error    { return s.put("add", obj, false) }
func (s *memStore[T]) Update(obj T) error { return s.put("update", obj, false) }
func (s *memStore[T]) Delete(obj T) error { return s.put("delete", obj, true) }

func (s *memStore[T]) Replace(items []T, rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNext {
		s.failNext = false
		return fmt.Errorf("store is full")
	}
	s.objs = map[string]T{}
	for _, it := range items {
		k, err := store.NamespacedKey(it)
		if err != nil {
			return err
		}
		s.objs[k] = it
	}
	s.log = append(s.log, fmt.Sprintf("replace %d@%s", len(items), rv))
	return nil
}

func (s *memStore[T]) UpdateResourceVersion(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.progress = rv
	s.log = append(s.log, "progress "+rv)
}

// contents renders key@rv for every object, sorted.
func (s *memStore[T]) contents() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.objs))
	for _, k := range slices.Sorted(maps.Keys(s.objs)) {
		out = append(out, k+"@"+s.objs[k].GetResourceVersion())
	}
	return strings.Join(out, " ")
}

// versions returns key → resource version.
func (s *memStore[T]) versions() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]string, len(s.objs))
	for k, o := range s.objs {
		m[k] = o.GetResourceVersion()
	}
	return m
}

func (s *memStore[T]) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// pagedMemStore is a memStore that also takes lists a page at a time
// (PagedStore), logging "page <n>[ first]" and "end <rv>".
type pagedMemStore[T store.Object] struct {
	*memStore[T]
	listed map[string]T // the list in progress
}

func newPagedMemStore[T store.Object]() *pagedMemStore[T] {
	return &pagedMemStore[T]{memStore: newMemStore[T]()}
}

func (s *pagedMemStore[T]) ReplacePage(items []T, first bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if first || s.listed == nil {
		s.listed = map[string]T{}
	}
	for _, it := range items {
		k, err := store.NamespacedKey(it)
		if err != nil {
			return err
		}
		s.listed[k] = it
	}
	line := fmt.Sprintf("page %d", len(items))
	if first {
		line += " first"
	}
	s.log = append(s.log, line)
	return nil
}

func (s *pagedMemStore[T]) ReplaceEnd(rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs, s.listed = s.listed, nil
	s.log = append(s.log, "end "+rv)
	return nil
}
