package store

import (
	"iter"

	"k8s.io/apimachinery/pkg/labels"
)

// Namespace returns a reader scoped to namespace ns, served from the
// built-in NamespaceIndex so its cost is proportional to the namespace, not
// the store. As in client-go listers, ns == "" (metav1.NamespaceAll) means
// every namespace.
func (r Reader[T]) Namespace(ns string) NamespaceReader[T] {
	return NamespaceReader[T]{r: r, ns: ns}
}

// NamespaceReader reads the objects of one namespace. It is a small value,
// safe for concurrent use.
type NamespaceReader[T Object] struct {
	// r is the store-wide reader this one narrows.
	r Reader[T]
	// ns is the namespace; "" means every namespace.
	ns string
}

// List returns the namespace's objects whose labels match sel; a nil
// selector matches everything.
func (n NamespaceReader[T]) List(sel labels.Selector) []T {
	keep := labelFilter[T](sel)
	if n.ns == "" {
		return n.r.c.appendAll(nil, keep)
	}
	out, _ := n.r.c.appendIndexed(nil, NamespaceIndex, n.ns, keep)
	return out
}

// ListSeq is [NamespaceReader.List] as an iterator, for a caller that only
// ranges over the objects: a namespace of 64 objects or more is read from
// the snapshot of its NamespaceIndex value without copying it, and sel is
// applied as the iteration runs (see [Reader.ByIndexSeq]). The objects are
// those of one moment during the call. In the all-namespaces reader
// (ns == "") the objects are copied, as List does.
func (n NamespaceReader[T]) ListSeq(sel labels.Selector) iter.Seq[T] {
	keep := labelFilter[T](sel)
	var objs []T
	if n.ns == "" {
		objs = n.r.c.appendAll(nil, keep)
		keep = nil
	} else {
		snap, small, _ := n.r.c.readIndexed(nil, NamespaceIndex, n.ns, keep)
		if snap == nil {
			objs, keep = small, nil // filtered while copied
		} else {
			objs = snap
		}
	}
	return func(yield func(T) bool) {
		for _, o := range objs {
			if (keep == nil || keep(o)) && !yield(o) {
				return
			}
		}
	}
}

// Get returns the object called name in the namespace. With the default
// key function this is one lookup; with a custom one it scans the
// namespace. In the all-namespaces reader (ns == ""), Get finds
// cluster-scoped objects.
func (n NamespaceReader[T]) Get(name string) (obj T, exists bool) {
	if n.r.defaultKey {
		var buf [128]byte
		key := buf[:0]
		if n.ns != "" {
			key = append(append(key, n.ns...), '/')
		}
		key = append(key, name...)
		return n.r.c.getBytes(key)
	}
	found, _ := n.r.c.appendIndexed(nil, NamespaceIndex, n.ns, func(o T) bool { return o.GetName() == name })
	if len(found) == 0 {
		return obj, false
	}
	return found[0], true
}
