package shard

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Matcher answers, on the client, whether one member owns an object: the
// fallback for a server that did not apply the shard selector (its list
// response has no ListMeta.ShardInfo). It decides exactly as the server's
// selector would: the same FNV-1a hash of the same field, the same slice
// bounds. A Matcher is immutable and safe for concurrent use.
type Matcher struct {
	// field is the hashed field, valid and never empty.
	field Field
	// n is the number of slices of the assignment it came from.
	n int
	// owned has bit s set when the member owns slice s; len == ceil(n/64).
	owned []uint64
}

// Matcher returns member's Matcher on field (FieldUID when empty). A
// member outside the ring owns nothing.
func (a *Assignment) Matcher(member string, field Field) (*Matcher, error) {
	if err := field.check(); err != nil {
		return nil, err
	}
	return matcherOf(a.Owned(member), a.n, field.orDefault()), nil
}

// matcherOf is the Matcher on field (valid) owning slices ss of n.
func matcherOf(ss []int, n int, field Field) *Matcher {
	m := &Matcher{field: field, n: n, owned: make([]uint64, (n+63)/64)}
	for _, s := range ss {
		m.owned[s/64] |= 1 << (s % 64)
	}
	return m
}

// Field is the field m hashes.
func (m *Matcher) Field() Field { return m.field }

// OwnsHash reports whether the member owns hash h.
func (m *Matcher) OwnsHash(h uint64) bool {
	s := sliceOf(h, m.n)
	return m.owned[s/64]&(1<<(s%64)) != 0
}

// OwnsKey reports whether the member owns an object whose field value is
// key.
func (m *Matcher) OwnsKey(key string) bool { return m.OwnsHash(Hash(key)) }

// Owns reports whether the member owns obj.
func (m *Matcher) Owns(obj metav1.Object) bool { return m.OwnsKey(m.field.Value(obj)) }
