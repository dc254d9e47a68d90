// Package jsonwire reads JSON without decoding it: the one scanner through
// which restsource finds the spans of values, walks objects and arrays and
// splits a watch stream into frames, and the one string unquoter,
// [Unquote]. It knows nothing of Kubernetes.
//
// It checks what it reads only as far as it must to find where things
// end: brackets match, strings hold no control characters, an object's
// members are keys, colons and commas; the decoders above validate the
// rest. Its results are encoding/json's where it decodes ([Unquote]).
//
// Three ways to read, one scanner:
//   - [SkipValue] (and [SkipString]) returns the end of a value in a buffer;
//   - [Entries] walks an object's members or an array's elements a step at
//     a time, each step taken again once more input is there if it ran out
//     ([ErrEnd]): the walker of both whole bodies and streamed lists;
//   - [Scanner] finds the end of an object or array that arrives in
//     pieces, resuming where the last piece stopped (watch frames).
//
// [MemberSpan] and [KeepMembers] cut members out of an object in place.
package jsonwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// ErrEnd is returned when the input ends inside what is read.
var ErrEnd = errors.New("unexpected end of JSON input")

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after b[i] that is
// not a space, or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// SkipString returns the index after the string starting at b[i] (a
// quote) and whether it contains escapes.
func SkipString(b []byte, i int) (end int, escaped bool, err error) {
	if end, escaped, _, err = stringEnd(b, i+1); err == nil && end < 0 {
		return 0, false, ErrEnd
	}
	return end, escaped, err
}

// stringEnd scans a string's content from b[i] (past its opening quote,
// or past a byte escaped): it returns the index after its closing quote,
// or -1 if b ends first, split then telling that b ended right after a
// backslash. It passes eight bytes at a time while none of them is a
// quote, a backslash or a control character (a string's bytes are most
// of what is scanned).
func stringEnd(b []byte, i int) (end int, escaped, split bool, err error) {
	for ; i < len(b); i++ {
		for i+8 <= len(b) {
			if m := stringSpecials(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8 // the first of them
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, false, nil
		case c == '\\':
			escaped = true
			if i++; i == len(b) {
				return -1, true, true, nil
			}
		case c < 0x20:
			return 0, false, false, fmt.Errorf("invalid character %q in a JSON string", c)
		}
	}
	return -1, escaped, false, nil
}

// stringSpecials marks the bytes of w (little-endian: b[i] is its lowest)
// that are a quote, a backslash or below 0x20 with their top bit, exactly
// up to the first of them (the bit tricks of "Bit Twiddling Hacks": a zero
// byte of w^c is a byte equal to c, and (w-n)&^w marks the bytes below n;
// a borrow may mark bytes after the first, never one before it). Zero: no
// such byte.
func stringSpecials(w uint64) uint64 {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) &^ x & tops }
	return zero(w^(ones*'"')) | zero(w^(ones*'\\')) | (w-ones*0x20)&^w&tops
}

// SkipValue returns the index after the JSON value starting at b[i], and
// the most arrays and objects open at once in it. Brackets must match; a
// number or a literal is the run of the bytes they are made of.
func SkipValue(b []byte, i int) (end, depth int, err error) {
	if i >= len(b) {
		return 0, 0, ErrEnd
	}
	switch c := b[i]; c {
	case '"':
		end, _, err := SkipString(b, i)
		return end, 0, err
	case '{', '[':
		var s Scanner
		switch n, err := s.Scan(b[i:]); {
		case err != nil:
			return 0, 0, err
		case n < 0:
			return 0, 0, ErrEnd
		default:
			return i + n, s.most, nil
		}
	default:
		start := i
		for i < len(b) && (b[i] >= 'a' && b[i] <= 'z' || b[i] >= '0' && b[i] <= '9' || b[i] == '-' || b[i] == '+' || b[i] == '.' || b[i] == 'E') {
			i++
		}
		if i == start {
			return 0, 0, fmt.Errorf("invalid character %q looking for the beginning of a JSON value", c)
		}
		return i, 0, nil
	}
}

// A Scanner finds where a JSON object or array ends in input that may
// arrive in pieces: each call of [Scanner.Scan] reads the next piece from
// where the last one stopped, the brackets open and whether it stopped in
// a string kept in the Scanner. The zero Scanner is ready to read a value;
// so is one whose value has ended.
type Scanner struct {
	// open holds the kinds of the brackets open, depth of them: bit k is
	// set if the k-th from the outermost is '[' (deeper for k >= 64, one
	// word per 64).
	open   uint64
	deeper []uint64
	depth  int
	most   int // the most brackets open at once, in the value read so far
	// inString: the last piece ended inside a string, and escaped: right
	// after a backslash in it.
	inString, escaped bool
}

// Scan reads b, the next piece of the value (the first begins with '{' or
// '['). It returns the index in b after the value's end, or -1 if the
// value goes on past b.
func (s *Scanner) Scan(b []byte) (int, error) {
	i := 0
	if s.inString {
		if s.escaped {
			if len(b) == 0 {
				return -1, nil
			}
			i, s.escaped = 1, false
		}
		end, _, split, err := stringEnd(b, i)
		if err != nil || end < 0 {
			s.escaped = split
			return -1, err
		}
		s.inString, i = false, end
	} else if s.depth == 0 && len(b) > 0 && b[0] != '{' && b[0] != '[' {
		return 0, fmt.Errorf("invalid character %q looking for the beginning of a JSON object or array", b[0])
	}
	depth, open := s.depth, s.open
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			end, _, split, err := stringEnd(b, i+1)
			if err != nil {
				return 0, err
			}
			if end < 0 {
				s.depth, s.open, s.inString, s.escaped = depth, open, true, split
				return -1, nil
			}
			i = end - 1
		case '{', '[':
			if depth < 64 {
				open = open&^(1<<depth) | b2u(c == '[')<<depth
			} else {
				s.push(depth, c == '[')
			}
			if depth++; depth > s.most {
				s.most = depth
			}
		case '}', ']':
			depth--
			array := open>>depth&1 != 0
			if depth >= 64 {
				array = s.deeper[(depth-64)/64]>>(depth%64)&1 != 0
			}
			if array != (c == ']') {
				return 0, fmt.Errorf("invalid character %q closing %q in JSON", c, "{["[b2u(array)])
			}
			if depth == 0 {
				s.depth, s.open = 0, 0
				return i + 1, nil
			}
		}
	}
	s.depth, s.open = depth, open
	return -1, nil
}

// push records the kind of the bracket opened at depth (at least 64).
func (s *Scanner) push(depth int, array bool) {
	w := (depth - 64) / 64
	if w == len(s.deeper) {
		s.deeper = append(s.deeper, 0)
	}
	s.deeper[w] = s.deeper[w]&^(1<<(depth%64)) | b2u(array)<<(depth%64)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
