package shard

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
)

// Selector renders member's part of the hash space as a KEP-5866 shard
// selector on field (FieldUID when empty), the value of
// metav1.ListOptions.ShardSelector:
//
//	shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(...)
//
// one shardRange per Range, bounds in the server's canonical form (16
// lowercase hex digits; the end of the space as '0x10000000000000000').
//
// ok is false when member owns nothing. An empty selector means "no
// filtering" to the server, so the caller must then list nothing rather
// than send "". kube-apiserver refuses selectors longer than 100,000
// characters (about 1,200 ranges): a member with more scattered slices
// than that (many slices for few members) needs a coarser one, as Source
// sends (a superset, with the rest filtered on the client).
func (a *Assignment) Selector(member string, field Field) (selector string, ok bool, err error) {
	if err := field.check(); err != nil {
		return "", false, err
	}
	rs := a.Ranges(member)
	if len(rs) == 0 {
		return "", false, nil
	}
	return RenderSelector(field, rs), true, nil
}

// RenderSelector renders ranges (non-empty) on field as a shard selector.
func RenderSelector(field Field, ranges []Range) string {
	var b strings.Builder
	for i, r := range ranges {
		if i > 0 {
			b.WriteString(" || ")
		}
		fmt.Fprintf(&b, "shardRange(%s, '%s', '%s')", field.orDefault(), r.startHex(), r.endHex())
	}
	return b.String()
}

// Requirements is the selector's ranges as apimachinery's requirements, for
// sharding.NewSelector.
func Requirements(field Field, ranges []Range) []sharding.ShardRangeRequirement {
	out := make([]sharding.ShardRangeRequirement, len(ranges))
	for i, r := range ranges {
		out[i] = sharding.ShardRangeRequirement{Key: string(field.orDefault()), Start: r.startHex(), End: r.endHex()}
	}
	return out
}

// maxSelectorLength is the longest shard selector kube-apiserver accepts:
// its CEL parser refuses expressions of more than 100,000 code points.
const maxSelectorLength = 100_000

// fitRanges returns rs (increasing, disjoint) merged across their smallest
// gaps until their selector on field fits maxSelectorLength: a superset of
// rs, the same when exact. A member with many scattered slices (many
// slices for few members) needs it; what the coarser selector adds must be
// filtered on the client.
func fitRanges(field Field, rs []Range) (fit []Range, exact bool) {
	term := len(RenderSelector(field, []Range{{Start: 0, Last: ^uint64(0)}})) // the longest term
	k := (maxSelectorLength + len(" || ")) / (term + len(" || "))
	if len(rs) <= k {
		return rs, true
	}
	// Keep the k-1 widest gaps; merge across the others.
	gaps := make([]int, len(rs)-1)
	for i := range gaps {
		gaps[i] = i
	}
	width := func(i int) uint64 { return rs[i+1].Start - rs[i].Last }
	slices.SortStableFunc(gaps, func(a, b int) int { return cmp.Compare(width(b), width(a)) })
	cut := gaps[:k-1]
	slices.Sort(cut)
	fit = make([]Range, 0, k)
	start := rs[0].Start
	for _, i := range cut {
		fit = append(fit, Range{Start: start, Last: rs[i].Last})
		start = rs[i+1].Start
	}
	return append(fit, Range{Start: start, Last: rs[len(rs)-1].Last}), false
}
