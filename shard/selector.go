package shard

import (
	"fmt"
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
// than send "".
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
