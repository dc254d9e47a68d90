package shardsel

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/sharding"
)

const (
	z    = "'0x0000000000000000'"
	half = "'0x8000000000000000'"
	top  = "'0x10000000000000000'"
)

// TestParse: what kube-apiserver's CEL parser accepts (the cases of its
// own parser_test.go, spacing, double quotes, parentheses) and refuses,
// with its messages.
func TestParse(t *testing.T) {
	uid := func(start, end string) sharding.ShardRangeRequirement {
		return sharding.ShardRangeRequirement{Key: "object.metadata.uid", Start: start, End: end}
	}
	for _, tc := range []struct {
		in   string
		want []sharding.ShardRangeRequirement
	}{
		{"shardRange(object.metadata.uid, " + z + ", " + half + ")", []sharding.ShardRangeRequirement{uid("0x0000000000000000", "0x8000000000000000")}},
		{"  shardRange( object.metadata.uid ,  " + z + " ,  " + top + " )  ", []sharding.ShardRangeRequirement{uid("0x0000000000000000", Top)}},
		{`shardRange(object.metadata.uid, "0x0000000000000000", "0x8000000000000000")`, []sharding.ShardRangeRequirement{uid("0x0000000000000000", "0x8000000000000000")}},
		{"(shardRange(object.metadata.uid, " + z + ", " + half + ") || shardRange(object.metadata.uid, " + half + ", " + top + "))",
			[]sharding.ShardRangeRequirement{uid("0x0000000000000000", "0x8000000000000000"), uid("0x8000000000000000", Top)}},
		{"(shardRange(object.metadata.uid, " + z + ", " + half + ") || shardRange(object.metadata.uid, " + half + ", " + top + ")) || shardRange(object.metadata.uid, " + z + ", " + top + ")",
			[]sharding.ShardRangeRequirement{uid("0x0000000000000000", "0x8000000000000000"), uid("0x8000000000000000", Top), uid("0x0000000000000000", Top)}},
		{"shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
			[]sharding.ShardRangeRequirement{{Key: "object.metadata.namespace", Start: "0x00000000000000aa", End: "0x00000000000000ff"}}},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if sharding.NewSelector(got...).String() != sharding.NewSelector(tc.want...).String() {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, msg string }{
		{"", "empty shard selector is not allowed"},
		{"shardRange(object.metadata.uid, " + z + ")", "requires exactly 3 arguments"},
		{"shardRange(object.metadata.name, " + z + ", " + top + ")", `unsupported field path "object.metadata.name"`},
		{"shardRange(object.metadata.uid, '0x0', " + top + ")", `did you mean "0x0000000000000000"?`},
		{"shardRange(object.metadata.uid, '0x000000000000000A', " + top + ")", "invalid hex character"},
		{"shardRange(object.metadata.uid, '0000000000000000', " + top + ")", "must have '0x' prefix"},
		{"shardRange(object.metadata.uid, 0x0000000000000000, " + top + ")", "must be a string literal"},
		{"shardRange(object.metadata.uid, " + top + ", " + top + ")", "must be less than end"},
		{"shardRange(object.metadata.uid, " + half + ", " + z + ")", "must be less than end"},
		{"shardRange(object.metadata.uid, " + z + ", '0x20000000000000000')", "must be '0x10000000000000000'"},
		{"shardRange(object.metadata.uid, " + z + ", " + top + ") || shardRange(object.metadata.namespace, " + z + ", " + top + ")", "same field"},
		{"shardRange(object.metadata.uid, " + z + ", " + top + ") && true", "expected shardRange() call"},
		{"size(object.metadata.uid)", "unsupported function"},
		{"shardRange(object.metadata.uid, " + z + ", " + top + ") ||", "empty operand"},
		{"(shardRange(object.metadata.uid, " + z + ", " + top + ")", "unterminated"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tc.in, err, tc.msg)
		}
	}
}
