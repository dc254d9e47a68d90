// Package informertest helps test code that handles informer
// notifications: [Recorder] is a typed handler that writes down every
// call, so that a test states the exact sequence it expects.
//
// # Usage
//
//	rec := &informertest.Recorder[*corev1.ConfigMap]{}
//	reg, err := inf.AddHandler(rec, informer.HandlerOptions{})
//	...
//	synctest.Wait() // or wait for a resource version
//	rec.ExpectExactly(t, "add a@1 initial=true", "update a@1->2")
//
// Lines name the object and its resource version:
//
//	add <name>@<rv> initial=<inInitialList>
//	update <name>@<old rv>-><new rv>
//	delete <name>@<rv> unknown=<finalStateUnknown>
//	moved <name>@<rv>
//
// A Recorder is an informer.MovedAwayHandler too: with a source that says
// what it serves, an object that left its part is recorded as moved.
//
// [ClientGoRecorder] is the same for client-go's untyped
// cache.ResourceEventHandler (the drop-in's handlers), in the same lines: a
// cache.DeletedFinalStateUnknown is recorded as the object it carries with
// unknown=true, and an object without metadata is named by its type.
//
// [HeldProcessing] (Options.Processing) holds the informer's processing
// between Hold and Release, so that a test can act while what the
// reflector took is still queued, not yet in the cache.
//
// # Concurrency
//
// Recorders are safe for concurrent use: the informer calls them from the
// handler's goroutine while the test reads them.
//
// # Testing
//
// The informer package's own tests use them (the drop-in's tests the
// ClientGoRecorder); recorder_test.go checks their lines and matching
// rules.
package informertest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/listwatch/listwatch/store"
)

// Recorder is an informer.Handler[T] that records each call as a line
// (see the package documentation). The zero value is ready to use.
type Recorder[T store.Object] struct {
	t transcript
}

// OnAdd records "add <name>@<rv> initial=<inInitialList>".
func (r *Recorder[T]) OnAdd(obj T, inInitialList bool) {
	r.t.add(obj.GetName(), obj.GetResourceVersion(), inInitialList)
}

// OnUpdate records "update <name>@<old rv>-><new rv>".
func (r *Recorder[T]) OnUpdate(old, new T) {
	r.t.update(new.GetName(), old.GetResourceVersion(), new.GetResourceVersion())
}

// OnDelete records "delete <name>@<rv> unknown=<finalStateUnknown>".
func (r *Recorder[T]) OnDelete(obj T, finalStateUnknown bool) {
	r.t.delete(obj.GetName(), obj.GetResourceVersion(), finalStateUnknown)
}

// OnMovedAway records "moved <name>@<rv>".
func (r *Recorder[T]) OnMovedAway(obj T) {
	r.t.rec("moved %s@%s", obj.GetName(), obj.GetResourceVersion())
}

// Take returns the lines recorded since the last Take and forgets them.
func (r *Recorder[T]) Take() []string { return r.t.take() }

// ExpectExactly takes the recorded lines and fails t unless they are want,
// in that order, and nothing else.
func (r *Recorder[T]) ExpectExactly(t testing.TB, want ...string) {
	t.Helper()
	r.t.expectExactly(t, want)
}

// Expect takes the recorded lines and fails t unless want appears among
// them in that order (other lines may come before, between and after).
func (r *Recorder[T]) Expect(t testing.TB, want ...string) {
	t.Helper()
	r.t.expect(t, want)
}

// transcript holds a recorder's lines; Recorder and ClientGoRecorder
// share it, so that both write the same lines and match them alike.
type transcript struct {
	mu sync.Mutex
	// lines are the calls recorded since the last take, oldest first.
	lines []string
}

func (r *transcript) rec(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *transcript) add(name, rv string, inInitialList bool) {
	r.rec("add %s@%s initial=%v", name, rv, inInitialList)
}

func (r *transcript) update(name, oldRV, newRV string) {
	r.rec("update %s@%s->%s", name, oldRV, newRV)
}

func (r *transcript) delete(name, rv string, finalStateUnknown bool) {
	r.rec("delete %s@%s unknown=%v", name, rv, finalStateUnknown)
}

func (r *transcript) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}

func (r *transcript) expectExactly(t testing.TB, want []string) {
	t.Helper()
	if got := r.take(); !slices.Equal(got, want) {
		t.Fatalf("handler calls:\ngot  %q\nwant %q", got, want)
	}
}

func (r *transcript) expect(t testing.TB, want []string) {
	t.Helper()
	got := r.take()
	if !isSubsequence(want, got) {
		t.Fatalf("handler calls:\ngot  %q\nwant, in this order, %q", got, want)
	}
}

// isSubsequence reports whether want appears in got in order.
func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
