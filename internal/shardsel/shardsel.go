// Package shardsel parses KEP-5866 shard selectors under kube-apiserver's
// rules (k8s.io/apiserver/pkg/sharding.Parse, which needs CEL): the one home
// of the grammar, for package shard (reading back the selector a list
// response echoes) and package fake (serving selectors as the server does).
//
// A selector is one or more shardRange(<field>, '<start>', '<end>') terms
// joined by ||, optionally parenthesised; the field is object.metadata.uid
// or object.metadata.namespace, the same in every term; each bound is a
// string literal (single or double quotes) of '0x' and exactly 16 lowercase
// hex digits, or '0x10000000000000000' (2^64) for an end; start < end. The
// messages are the server's where it has one. Other CEL (&&, functions,
// escapes) is refused, as the server refuses it.
package shardsel

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
)

// Top is the exclusive end of the hash space, 2^64, as a bound.
const Top = "0x10000000000000000"

// Parse parses s into its requirements, in the order written.
func Parse(s string) ([]sharding.ShardRangeRequirement, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty shard selector is not allowed; omit the parameter for unfiltered lists")
	}
	terms, err := split(s)
	if err != nil {
		return nil, err
	}
	out := make([]sharding.ShardRangeRequirement, 0, len(terms))
	for _, t := range terms {
		r, err := term(t)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && r.Key != out[0].Key {
			return nil, fmt.Errorf("all shard ranges must use the same field, got %q and %q", out[0].Key, r.Key)
		}
		out = append(out, r)
	}
	return out, nil
}

// split cuts s at the || outside quotes and parentheses, and strips each
// part's enclosing parentheses.
func split(s string) ([]string, error) {
	var out []string
	start := 0
	err := scan(s, func(i int) int {
		out = append(out, s[start:i])
		start = i + 2
		return i + 1
	})
	if err != nil {
		return nil, err
	}
	out = append(out, s[start:])
	var terms []string
	for _, t := range out {
		t = strings.TrimSpace(t)
		stripped := false
		for len(t) > 1 && t[0] == '(' && t[len(t)-1] == ')' && scan(t[1:len(t)-1], nil) == nil {
			t, stripped = strings.TrimSpace(t[1:len(t)-1]), true
		}
		if t == "" {
			return nil, fmt.Errorf("CEL parse error: empty operand of ||")
		}
		if !stripped {
			terms = append(terms, t)
			continue
		}
		inner, err := split(t) // (a || b) || c
		if err != nil {
			return nil, err
		}
		terms = append(terms, inner...)
	}
	return terms, nil
}

// scan walks s and, when or is set, calls it with the index of every ||
// outside quotes and parentheses (or returns the index to go on from); it
// fails when the parentheses or quotes of s do not balance.
func scan(s string, or func(i int) int) error {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			if depth--; depth < 0 {
				return fmt.Errorf("CEL parse error: unbalanced ')'")
			}
		case c == '|' && depth == 0 && or != nil && i+1 < len(s) && s[i+1] == '|':
			i = or(i)
		}
	}
	if quote != 0 || depth != 0 {
		return fmt.Errorf("CEL parse error: unterminated quote or parenthesis")
	}
	return nil
}

// term parses shardRange(<field>, <start>, <end>).
func term(t string) (sharding.ShardRangeRequirement, error) {
	var r sharding.ShardRangeRequirement
	open := strings.IndexByte(t, '(')
	if open < 0 || !strings.HasSuffix(t, ")") {
		return r, fmt.Errorf("unexpected expression %q; expected shardRange() call or || operator", t)
	}
	if fn := strings.TrimSpace(t[:open]); fn != "shardRange" {
		return r, fmt.Errorf("unsupported function %q; only shardRange() and || are allowed", fn)
	}
	args := strings.Split(t[open+1:len(t)-1], ",")
	if len(args) != 3 {
		return r, fmt.Errorf("shardRange() requires exactly 3 arguments, got %d", len(args))
	}
	r.Key = strings.Join(strings.Fields(args[0]), "")
	switch r.Key {
	case "object.metadata.uid", "object.metadata.namespace":
	default:
		return r, fmt.Errorf("unsupported field path %q; supported: object.metadata.uid, object.metadata.namespace", r.Key)
	}
	var err error
	if r.Start, err = hexLiteral(args[1], "hexStart"); err != nil {
		return r, err
	}
	if r.End, err = hexLiteral(args[2], "hexEnd"); err != nil {
		return r, err
	}
	if !sharding.HexLess(r.Start, r.End) {
		return r, fmt.Errorf("shard range start %s must be less than end %s", r.Start, r.End)
	}
	return r, nil
}

// hexLiteral reads a quoted bound: '0x' and 16 lowercase hex digits, or Top.
func hexLiteral(arg, name string) (string, error) {
	q := strings.TrimSpace(arg)
	if len(q) < 2 || (q[0] != '\'' && q[0] != '"') || q[len(q)-1] != q[0] {
		return "", fmt.Errorf("%s must be a string literal (e.g. '0xff'), got %s", name, q)
	}
	s := q[1 : len(q)-1]
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return "", fmt.Errorf("%s must have '0x' prefix, got %q", name, s)
	}
	if hex == "" {
		return "", fmt.Errorf("%s: hex value is required after '0x'", name)
	}
	if len(hex) > 17 {
		return "", fmt.Errorf("%s: hex value too long (%d chars, max 17): %q", name, len(hex), hex)
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("%s: invalid hex character %q in %q", name, string(c), s)
		}
	}
	if len(hex) == 17 {
		if s != Top {
			return "", fmt.Errorf("%s: 17-digit hex value must be '0x10000000000000000' (2^64), got %q", name, s)
		}
	} else if len(hex) != 16 {
		padded := "0x" + strings.Repeat("0", 16-len(hex)) + hex
		return "", fmt.Errorf("%s must be a 0x-prefixed 16-digit hex value, got %q (did you mean %q?)", name, s, padded)
	}
	return s, nil
}
