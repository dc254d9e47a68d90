package restsource

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
)

// The JSON helpers below find the spans of values without decoding them:
// a watch frame's envelope and a list's items are split by hand, and only
// the objects themselves go through the (much slower) typed decoder, which
// validates them completely.

var errJSONEnd = errors.New("unexpected end of JSON input")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote) and whether it contains escapes. It passes eight bytes at a time
// while none of them is a quote, a backslash or a control character (a
// string's bytes are most of what the scanners here read).
func skipString(b []byte, i int) (int, bool, error) {
	escaped := false
	for i++; i < len(b); i++ {
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
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			i++
		case c < 0x20:
			return 0, false, fmt.Errorf("invalid character %q in a JSON string", c)
		}
	}
	return 0, false, errJSONEnd
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

// skipValue returns the index after the JSON value starting at b[i].
// Brackets must match; the content of objects and arrays is not otherwise
// validated (the typed decoder does that).
func skipValue(b []byte, i int) (int, error) {
	end, _, err := skipValueDepth(b, i)
	return end, err
}

// skipValueDepth is skipValue, also returning the most arrays and
// objects open at once in the value.
func skipValueDepth(b []byte, i int) (_, depth int, _ error) {
	if i >= len(b) {
		return 0, 0, errJSONEnd
	}
	switch c := b[i]; c {
	case '"':
		end, _, err := skipString(b, i)
		return end, 0, err
	case '{', '[':
		var stackBuf [32]byte
		stack := append(stackBuf[:0], c)
		depth = 1
		for i++; i < len(b); i++ {
			switch c := b[i]; c {
			case '"':
				end, _, err := skipString(b, i)
				if err != nil {
					return 0, 0, err
				}
				i = end - 1
			case '{', '[':
				stack = append(stack, c)
				depth = max(depth, len(stack))
			case '}', ']':
				open := stack[len(stack)-1]
				if (c == '}') != (open == '{') {
					return 0, 0, fmt.Errorf("invalid character %q closing %q in JSON", c, open)
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i + 1, depth, nil
				}
			}
		}
		return 0, 0, errJSONEnd
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

// noMemberNamed reports whether rest, the bytes after a member's value,
// cannot hold another member named key: nothing in it is escaped and key
// is nowhere written in quotes.
func noMemberNamed(rest []byte, key string) bool {
	return bytes.IndexByte(rest, '\\') < 0 && !bytes.Contains(rest, []byte(`"`+key+`"`))
}

// eachMember calls fn with the key and the value's span of every member of
// the JSON object that is all of b (surrounding spaces allowed). Keys are
// matched case-sensitively by the callers, as Kubernetes' decoders do.
func eachMember(b []byte, fn func(key, value []byte) error) error {
	return eachMemberAt(b, func(key []byte, _, valStart, valEnd int) error {
		return fn(key, b[valStart:valEnd])
	})
}

// eachMemberAt is eachMember with offsets in b: the start of the member's
// key (its opening quote) and the span of its value.
func eachMemberAt(b []byte, fn func(key []byte, keyStart, valStart, valEnd int) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) {
		return errJSONEnd
	}
	if b[i] != '{' {
		return fmt.Errorf("invalid character %q looking for the beginning of a JSON object", b[i])
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) {
				return errJSONEnd
			}
			if b[i] != '"' {
				return fmt.Errorf("invalid character %q looking for the beginning of an object key", b[i])
			}
			keyStart := i
			end, escaped, err := skipString(b, i)
			if err != nil {
				return err
			}
			key := b[i+1 : end-1]
			if escaped {
				var s string
				if err := json.Unmarshal(b[i:end], &s); err != nil {
					return err
				}
				key = []byte(s)
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return errors.New("missing ':' after an object key in JSON")
			}
			i = skipSpace(b, i+1)
			vend, err := skipValue(b, i)
			if err != nil {
				return err
			}
			if err := fn(key, keyStart, i, vend); err != nil {
				return err
			}
			i = skipSpace(b, vend)
			if i >= len(b) {
				return errJSONEnd
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != ',' {
				return fmt.Errorf("invalid character %q after an object member in JSON", b[i])
			}
			i = skipSpace(b, i+1)
		}
	}
	if i = skipSpace(b, i); i != len(b) {
		return fmt.Errorf("invalid character %q after the top-level JSON object", b[i])
	}
	return nil
}

// eachElement appends the span of every element of the JSON array v (or
// nothing for null) to out.
func eachElement(v []byte, out [][]byte) ([][]byte, error) {
	if string(v) == "null" {
		return out, nil
	}
	if len(v) == 0 || v[0] != '[' {
		return nil, errors.New("JSON items are not an array")
	}
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		return out, nil
	}
	for {
		end, err := skipValue(v, i)
		if err != nil {
			return nil, err
		}
		out = append(out, v[i:end])
		i = skipSpace(v, end)
		if i >= len(v) {
			return nil, errJSONEnd
		}
		if v[i] == ']' {
			return out, nil
		}
		if v[i] != ',' {
			return nil, fmt.Errorf("invalid character %q after an array element in JSON", v[i])
		}
		i = skipSpace(v, i+1)
	}
}

// jsonString decodes the JSON string v; without escapes its bytes are
// returned as they are.
func jsonString(v []byte) ([]byte, error) {
	if string(v) == "null" {
		return nil, nil
	}
	if len(v) < 2 || v[0] != '"' {
		return nil, fmt.Errorf("expected a JSON string, got %s", truncate(v))
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// parseJSONEvent splits a JSON watch frame {"type": ..., "object": {...}}
// into the event type and the object's span. A missing object is
// returned as nil.
func parseJSONEvent(frame []byte) (typ, object []byte, err error) {
	err = eachMember(frame, func(key, v []byte) error {
		switch string(key) {
		case "type":
			s, err := jsonString(v)
			if err != nil {
				return err
			}
			typ = s
		case "object":
			object = v
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("malformed JSON watch event: %w", err)
	}
	return typ, object, nil
}

// jsonList is a JSON list split into its parts.
type jsonList struct {
	apiVersion, kind []byte
	metadata         []byte
	items            [][]byte
}

func parseJSONList(body []byte) (jsonList, error) {
	var l jsonList
	err := eachMember(body, func(key, v []byte) error {
		var err error
		switch string(key) {
		case "apiVersion":
			l.apiVersion, err = jsonString(v)
		case "kind":
			l.kind, err = jsonString(v)
		case "metadata":
			l.metadata = v
		case "items":
			l.items, err = eachElement(v, l.items[:0])
		}
		return err
	})
	if err != nil {
		return l, fmt.Errorf("malformed JSON list: %w", err)
	}
	return l, nil
}
