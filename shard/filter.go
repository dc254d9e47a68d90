package shard

import (
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Filter says whether a member owns an object under the member's latest
// assignment: hand [Filter.Update] every [Change] (or use [Filter.OnChange]
// as MemberOptions.OnChange) and give [Filter.Owns], or [FilterFunc] for a
// typed informer, to whatever must see owned objects only. Before the first
// Change it owns nothing, so a replica that has not yet seen its ring
// claims nothing. Safe for concurrent use: readers never wait for Update.
//
// As a handler filter (informer.FilteringHandler) it decides per event:
// objects of slices gained by a Change get no event until they next change.
// Hand them over with [Change.GainedMatcher] over the informer's cache.
type Filter struct {
	// field is the hashed field, valid and never empty.
	field Field
	// cur is the member's Matcher under the latest assignment; nil before
	// the first Update (owns nothing).
	cur atomic.Pointer[Matcher]
}

// NewFilter returns a Filter on field (FieldUID when empty) that owns
// nothing until its first Update.
func NewFilter(field Field) (*Filter, error) {
	if err := field.check(); err != nil {
		return nil, err
	}
	return &Filter{field: field.orDefault()}, nil
}

// Update makes f follow c: from now on it owns what c.Member hands out
// under c (what it owns in c.Assignment, less c.Withheld).
func (f *Filter) Update(c Change) {
	m, err := c.Matcher(f.field) // without c.Withheld
	if err != nil {
		panic(err) // unreachable: f.field was checked by NewFilter
	}
	f.cur.Store(m)
}

// OnChange is Update, with the signature of MemberOptions.OnChange.
func (f *Filter) OnChange(c Change) { f.Update(c) }

// Owns reports whether the member owns obj under the latest assignment.
func (f *Filter) Owns(obj metav1.Object) bool {
	m := f.cur.Load()
	return m != nil && m.Owns(obj)
}

// FilterFunc adapts f to a typed object, for informer.FilteringHandler[T]
// and other func(T) bool hooks.
func FilterFunc[T metav1.Object](f *Filter) func(T) bool {
	return func(obj T) bool { return f.Owns(obj) }
}

// GainedMatcher is a Matcher on field (FieldUID when empty) that owns
// exactly the slices c gained: the objects to hand to the member's
// handlers as adds when it takes over (those already cached get no event
// of their own).
func (c Change) GainedMatcher(field Field) (*Matcher, error) { return c.slicesMatcher(c.Gained, field) }

// LostMatcher is a Matcher on field that owns exactly the slices c lost:
// the objects the member must stop handling.
func (c Change) LostMatcher(field Field) (*Matcher, error) { return c.slicesMatcher(c.Lost, field) }

func (c Change) slicesMatcher(ss []int, field Field) (*Matcher, error) {
	if err := field.check(); err != nil {
		return nil, err
	}
	return matcherOf(ss, c.Assignment.n, field.orDefault()), nil
}
