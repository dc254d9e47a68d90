package shard

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
)

// The API server parses shard selectors with CEL (k8s.io/apiserver's
// sharding.Parse); apimachinery has only the Selector type. ParseSelector
// accepts the subset this package renders, under the server's rules: each
// term is shardRange(<field>, '<start>', '<end>'), terms are joined by ||,
// bounds are '0x' and exactly 16 lowercase hex digits (or
// '0x10000000000000000' for 2^64), start < end, and all terms name the same
// supported field. It exists so that a client can read back the selector a
// list response echoes in ListMeta.ShardInfo without a CEL dependency.

// ParseSelector parses a shard selector into apimachinery's Selector, whose
// Matches the server applies.
func ParseSelector(s string) (sharding.Selector, error) {
	field, ranges, err := ParseRanges(s)
	if err != nil {
		return nil, err
	}
	return sharding.NewSelector(Requirements(field, ranges)...), nil
}

// ParseRanges parses a shard selector into its field and ranges, in the
// order written.
func ParseRanges(s string) (Field, []Range, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil, fmt.Errorf("shard: empty selector")
	}
	var field Field
	var out []Range
	for i, term := range strings.Split(s, "||") {
		f, r, err := parseTerm(strings.TrimSpace(term))
		if err != nil {
			return "", nil, fmt.Errorf("shard: selector term %d: %w", i+1, err)
		}
		if i > 0 && f != field {
			return "", nil, fmt.Errorf("shard: selector mixes fields %q and %q", field, f)
		}
		field = f
		out = append(out, r)
	}
	return field, out, nil
}

// parseTerm parses shardRange(<field>, '<start>', '<end>').
func parseTerm(t string) (Field, Range, error) {
	const open = "shardRange("
	if !strings.HasPrefix(t, open) || !strings.HasSuffix(t, ")") {
		return "", Range{}, fmt.Errorf("%q is not shardRange(field, 'start', 'end')", t)
	}
	args := strings.Split(t[len(open):len(t)-1], ",")
	if len(args) != 3 {
		return "", Range{}, fmt.Errorf("shardRange needs 3 arguments, got %d", len(args))
	}
	f := Field(strings.TrimSpace(args[0]))
	if !f.Valid() {
		return "", Range{}, fmt.Errorf("unsupported field %q", f)
	}
	start, err := parseBound(strings.TrimSpace(args[1]))
	if err != nil {
		return "", Range{}, fmt.Errorf("start: %w", err)
	}
	end, err := parseBound(strings.TrimSpace(args[2]))
	if err != nil {
		return "", Range{}, fmt.Errorf("end: %w", err)
	}
	if start.top || !end.top && start.v >= end.v {
		return "", Range{}, fmt.Errorf("start %s is not below end %s", args[1], args[2])
	}
	last := end.v - 1
	if end.top {
		last = ^uint64(0)
	}
	return f, Range{Start: start.v, Last: last}, nil
}

// bound is a parsed range bound: v, or 2^64 when top.
type bound struct {
	v   uint64
	top bool
}

// parseBound parses a quoted bound in the server's canonical form.
func parseBound(q string) (bound, error) {
	if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
		return bound{}, fmt.Errorf("%s is not a single-quoted string", q)
	}
	s := q[1 : len(q)-1]
	if s == "0x10000000000000000" {
		return bound{top: true}, nil
	}
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok || len(hex) != 16 {
		return bound{}, fmt.Errorf("%q is not '0x' and 16 hex digits", s)
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return bound{}, fmt.Errorf("%q has a character other than 0-9, a-f", s)
		}
	}
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return bound{}, err
	}
	return bound{v: v}, nil
}
