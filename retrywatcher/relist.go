package retrywatcher

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/objname"
)

// DropNoMetadata marks a listed item without object metadata: it has no key,
// so it cannot be compared with what was delivered.
const DropNoMetadata DropReason = "no-metadata"

// listed takes a completed quorum list in relist mode (Listed): its items
// and the list's resource version. The machine delivers what changed since the last
// delivered state — ADDED for new keys, MODIFIED for keys whose RV moved,
// DELETED (with the last delivered object) for keys gone — in key order, and
// then watches from rv. A list whose rv is malformed is refused: the
// machine backs off and lists again.
func (m *Machine) listed(items []runtime.Object, rv string) []Effect {
	if m.phase != PhaseListing {
		return nil
	}
	num, ok := parseRV(rv)
	if !ok {
		// Watching from it would fail; back off and list again.
		return m.wait(0, "list-with-malformed-resource-version")
	}
	var out []Effect
	next := make(map[string]runtime.Object, len(items))
	for _, obj := range items {
		acc, err := meta.Accessor(obj)
		if err != nil {
			out = append(out, Drop{Event: watch.Event{Type: watch.Added, Object: obj}, Reason: DropNoMetadata})
			continue
		}
		next[objname.Of(acc)] = obj
	}
	keys := make([]string, 0, len(next)+len(m.known))
	for k := range next {
		keys = append(keys, k)
	}
	for k := range m.known {
		if _, ok := next[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if ev, ok := change(m.known[k], next[k]); ok {
			out = append(out, Deliver{Event: ev})
		}
	}
	m.known = next
	m.setRV(rv, num)
	m.failures = 0
	return append(out, m.open()...)
}

// change returns the synthetic event that turns old into cur; either may be
// nil (absent). ok is false when nothing changed.
func change(old, cur runtime.Object) (watch.Event, bool) {
	switch {
	case old == nil:
		return watch.Event{Type: watch.Added, Object: cur}, true
	case cur == nil:
		return watch.Event{Type: watch.Deleted, Object: old}, true
	}
	oldAcc, _ := meta.Accessor(old)
	curAcc, _ := meta.Accessor(cur)
	if oldAcc.GetResourceVersion() == curAcc.GetResourceVersion() {
		return watch.Event{}, false
	}
	return watch.Event{Type: watch.Modified, Object: cur}, true
}

// listFailed takes the error List failed with (ListFailed). A 401/403 stops the machine;
// anything else (a 410 included, which a quorum list should never return)
// backs off and lists again.
func (m *Machine) listFailed(err error) []Effect {
	if m.phase != PhaseListing {
		return nil
	}
	class, retryAfter := classify(err)
	if class == ClassUnauthorized {
		m.phase = PhaseStopped
		return []Effect{Deliver{Event: errorEvent(err)}, Finish{Err: err}}
	}
	return m.wait(retryAfter, string(class))
}
