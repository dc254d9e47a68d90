package scope

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Scope is the part of a resource an informer holds: the objects of some
// namespaces (or all) that match a label and a field selector, both
// applied by the server.
type Scope struct {
	// Namespaces are the namespaces held; nil or empty means every
	// namespace. Order and repeats do not matter.
	Namespaces []string
	// LabelSelector and FieldSelector are sent with every list and watch
	// (metav1.ListOptions); empty selects everything.
	LabelSelector string
	FieldSelector string
}

// Validate reports why sc cannot be served: a namespace that is not a
// DNS-1123 label, or a selector that does not parse.
func (sc Scope) Validate() error {
	for _, ns := range sc.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			return fmt.Errorf("scope: namespace %q: %s", ns, strings.Join(msgs, "; "))
		}
	}
	if _, err := labels.Parse(sc.LabelSelector); err != nil {
		return fmt.Errorf("scope: label selector %q: %w", sc.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(sc.FieldSelector); err != nil {
		return fmt.Errorf("scope: field selector %q: %w", sc.FieldSelector, err)
	}
	return nil
}

// All reports whether sc holds every namespace.
func (sc Scope) All() bool { return len(sc.Namespaces) == 0 }

// Has reports whether sc holds namespace ns.
func (sc Scope) Has(ns string) bool {
	if sc.All() {
		return true
	}
	return slices.Contains(sc.Namespaces, ns)
}

// hasNormal is Has for a normal scope (sorted namespaces).
func (sc Scope) hasNormal(ns string) bool {
	if sc.All() {
		return true
	}
	_, ok := slices.BinarySearch(sc.Namespaces, ns)
	return ok
}

// Equal reports whether sc and o hold the same part.
func (sc Scope) Equal(o Scope) bool {
	a, b := sc.normal(), o.normal()
	return slices.Equal(a.Namespaces, b.Namespaces) && a.LabelSelector == b.LabelSelector && a.FieldSelector == b.FieldSelector
}

// String renders sc, e.g. "namespaces=a,b labels=app=x".
func (sc Scope) String() string {
	n := sc.normal()
	ns := "*"
	if !n.All() {
		ns = strings.Join(n.Namespaces, ",")
	}
	out := "namespaces=" + ns
	if n.LabelSelector != "" {
		out += " labels=" + n.LabelSelector
	}
	if n.FieldSelector != "" {
		out += " fields=" + n.FieldSelector
	}
	return out
}

// normal returns sc with its namespaces sorted and without repeats (a
// copy: the caller's slice stays as it was), nil for all.
func (sc Scope) normal() Scope {
	if len(sc.Namespaces) == 0 {
		sc.Namespaces = nil
		return sc
	}
	ns := slices.Clone(sc.Namespaces)
	slices.Sort(ns)
	sc.Namespaces = slices.Compact(ns)
	return sc
}

// sameSelectors reports whether sc and o have the same selectors.
func (sc Scope) sameSelectors(o Scope) bool {
	return sc.LabelSelector == o.LabelSelector && sc.FieldSelector == o.FieldSelector
}

// minus returns the namespaces of a not in b (both normal, neither all).
func minus(a, b []string) []string {
	var out []string
	for _, ns := range a {
		if _, ok := slices.BinarySearch(b, ns); !ok {
			out = append(out, ns)
		}
	}
	return out
}
