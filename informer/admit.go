package informer

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"

	"github.com/listwatch/listwatch/internal/nilcheck"
)

// errTransformNil is the error a Transform that returns nil with no error
// is taken to have returned.
var errTransformNil = errors.New("transform returned nil")

// DropError says why the informer dropped an object: its Transform failed
// or returned nil, or (in the drop-in) it is not of the example object's
// type. It is what Status reports in LastError.
type DropError struct {
	// Key is the object's namespace/name, as far as it could be read.
	Key string
	// Reason is reflector.ReasonUnexpectedType for an object of the wrong
	// type, reflector.ReasonStore for a failed Transform.
	Reason reflector.Reason
	// Err is the cause.
	Err error
}

func (e *DropError) Error() string { return fmt.Sprintf("object %s dropped: %v", e.Key, e.Err) }
func (e *DropError) Unwrap() error { return e.Err }

// admission prepares each object the reflector hands over for the queue:
// the Transform, applied object by object so that one bad object costs
// only itself (a list still applies the rest). A dropped object is logged,
// counted and reported by Status until a list completes with none dropped.
type admission[T store.Object] struct {
	transform func(T) (T, error)
	// check, when set, runs before transform (the drop-in's type check); a
	// non-nil error drops the object as ReasonUnexpectedType.
	check func(T) error
	// log is set by Run before the reflector starts.
	log     logr.Logger
	metrics reflector.Metrics

	dropped atomic.Int64
	// listDrops counts drops since the current list began.
	listDrops atomic.Int64
	mu        sync.Mutex
	// last is the last drop, reported by Status; cleared by a list that
	// completes with no drop.
	last *DropError
}

// enabled reports whether admit can change or drop anything.
func (a *admission[T]) enabled() bool { return a.transform != nil || a.check != nil }

// verdict is what admission made of an object.
type verdict uint8

const (
	admitted verdict = iota
	// dropped: a failed Transform. The object is of this resource, so
	// its resource version still says how far the cache has got.
	dropped
	// foreign: the wrong type. Its resource version, from who knows
	// where, counts for nothing (as for the reflector's own drops).
	foreign
)

// admit returns the object to queue, and whether it was admitted.
func (a *admission[T]) admit(obj T) (T, verdict) {
	if a.check != nil {
		if err := a.check(obj); err != nil {
			a.drop(obj, reflector.ReasonUnexpectedType, err)
			return obj, foreign
		}
	}
	if a.transform == nil {
		return obj, admitted
	}
	out, err := a.transform(obj)
	if err == nil && nilcheck.Is(out) {
		err = errTransformNil
	}
	if err != nil {
		a.drop(obj, reflector.ReasonStore, fmt.Errorf("transform: %w", err))
		return obj, dropped
	}
	return out, admitted
}

// admitList admits items in place and returns the ones to queue.
func (a *admission[T]) admitList(items []T) []T {
	if !a.enabled() {
		return items
	}
	n := 0
	for _, obj := range items {
		if out, v := a.admit(obj); v == admitted {
			items[n] = out
			n++
		}
	}
	clear(items[n:])
	return items[:n]
}

func (a *admission[T]) drop(obj T, reason reflector.Reason, err error) {
	key := "<unknown>"
	if !nilcheck.Is(obj) {
		key = klog.KObj(obj).String()
	}
	d := &DropError{Key: key, Reason: reason, Err: err}
	a.dropped.Add(1)
	a.listDrops.Add(1)
	if a.metrics != nil {
		a.metrics.Error(reason)
	}
	a.mu.Lock()
	a.last = d
	a.mu.Unlock()
	a.log.Error(err, "Object dropped: not cached, not handed to any handler", "object", key, "reason", reason)
}

// listStarted and listDone bracket a list: one that completes without a
// drop clears the drop Status reports.
func (a *admission[T]) listStarted() { a.listDrops.Store(0) }

func (a *admission[T]) listDone() {
	if a.listDrops.Load() == 0 {
		a.mu.Lock()
		a.last = nil
		a.mu.Unlock()
	}
}

// status adds the last drop to st when the reflector reports no error of
// its own.
func (a *admission[T]) status(st reflector.Status) reflector.Status {
	a.mu.Lock()
	d := a.last
	a.mu.Unlock()
	if d != nil && st.LastError == nil {
		st.Reason, st.LastError = d.Reason, d
	}
	return st
}
