package informertest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// ClientGoRecorder is a client-go cache.ResourceEventHandler that records
// each call as a line, in [Recorder]'s words (see the package
// documentation). The zero value is ready to use.
type ClientGoRecorder struct {
	t transcript
}

var _ cache.ResourceEventHandler = (*ClientGoRecorder)(nil)

// OnAdd records "add <name>@<rv> initial=<isInInitialList>".
func (r *ClientGoRecorder) OnAdd(obj any, isInInitialList bool) {
	name, rv := nameAndRV(obj)
	r.t.add(name, rv, isInInitialList)
}

// OnUpdate records "update <name>@<old rv>-><new rv>".
func (r *ClientGoRecorder) OnUpdate(oldObj, newObj any) {
	_, oldRV := nameAndRV(oldObj)
	name, newRV := nameAndRV(newObj)
	r.t.update(name, oldRV, newRV)
}

// OnDelete records "delete <name>@<rv> unknown=<tombstone>": a
// cache.DeletedFinalStateUnknown is recorded as the object it carries,
// with unknown=true.
func (r *ClientGoRecorder) OnDelete(obj any) {
	tombstone, unknown := obj.(cache.DeletedFinalStateUnknown)
	if unknown {
		obj = tombstone.Obj
	}
	name, rv := nameAndRV(obj)
	r.t.delete(name, rv, unknown)
}

// Take returns the lines recorded since the last Take and forgets them.
func (r *ClientGoRecorder) Take() []string { return r.t.take() }

// ExpectExactly takes the recorded lines and fails t unless they are want,
// in that order, and nothing else.
func (r *ClientGoRecorder) ExpectExactly(t testing.TB, want ...string) {
	t.Helper()
	r.t.expectExactly(t, want)
}

// Expect takes the recorded lines and fails t unless want appears among
// them in that order (other lines may come before, between and after).
func (r *ClientGoRecorder) Expect(t testing.TB, want ...string) {
	t.Helper()
	r.t.expect(t, want)
}

// nameAndRV returns obj's name and resource version, or, for an object
// without metadata (or nil), its type and no resource version.
func nameAndRV(obj any) (name, rv string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj), ""
	}
	return m.GetName(), m.GetResourceVersion()
}
