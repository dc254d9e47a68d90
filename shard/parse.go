package shard

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"

	"github.com/listwatch/listwatch/internal/shardsel"
)

// The API server parses shard selectors with CEL (k8s.io/apiserver's
// sharding.Parse); apimachinery has only the Selector type. ParseSelector
// accepts what the server accepts, without CEL: each term is
// shardRange(<field>, '<start>', '<end>'), terms are joined by ||, bounds
// are '0x' and exactly 16 lowercase hex digits (or '0x10000000000000000'
// for 2^64), start < end, and all terms name the same supported field. It
// exists so that a client can read back the selector a list response
// echoes in ListMeta.ShardInfo without a CEL dependency.

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
// order written. The grammar and its messages are the server's
// (internal/shardsel).
func ParseRanges(s string) (Field, []Range, error) {
	reqs, err := shardsel.Parse(s)
	if err != nil {
		return "", nil, fmt.Errorf("shard: %w", err)
	}
	out := make([]Range, len(reqs))
	for i, r := range reqs {
		start, err := strconv.ParseUint(strings.TrimPrefix(r.Start, "0x"), 16, 64)
		if err != nil { // unreachable: Top is never below an end
			return "", nil, fmt.Errorf("shard: start %q: %w", r.Start, err)
		}
		last := ^uint64(0)
		if r.End != shardsel.Top {
			end, err := strconv.ParseUint(strings.TrimPrefix(r.End, "0x"), 16, 64)
			if err != nil {
				return "", nil, fmt.Errorf("shard: end %q: %w", r.End, err)
			}
			last = end - 1 // end > start >= 0
		}
		out[i] = Range{Start: start, Last: last}
	}
	return Field(reqs[0].Key), out, nil
}
