package jsonwire

import (
	"bytes"
	"errors"
	"fmt"
)

// Entries walks the members of a JSON object or the elements of an
// array, a step at a time; the caller reads or skips each value itself:
//
//	e, i, err := jsonwire.Open(b, i, '{')
//	for err == nil {
//		var more bool
//		if i, more, err = e.Next(b, i); !more {
//			break // i is after the '}'
//		}
//		// e.Key's value starts at b[i]; read it, and set i to its end
//	}
//
// A step that runs out of input returns [ErrEnd] and changes nothing: it
// can be taken again once more input follows b (a buffer that grows or
// moves, the indices following it).
type Entries struct {
	// Key is the current member's key (of an object): its bytes as written
	// or, if it has escapes (Escaped), unquoted. KeyStart is the index of
	// its opening quote.
	Key      []byte
	KeyStart int
	Escaped  bool

	close byte // '}' or ']'
	n     int  // the entries read
}

// Open starts the walk of the object (open is '{') or the array ('[')
// whose bracket is at b[i]; it returns the index after it.
func Open(b []byte, i int, open byte) (Entries, int, error) {
	what, close := "object", byte('}')
	if open == '[' {
		what, close = "array", ']'
	}
	switch {
	case i >= len(b):
		return Entries{}, 0, ErrEnd
	case b[i] != open:
		return Entries{}, 0, fmt.Errorf("invalid character %q looking for the beginning of a JSON %s", b[i], what)
	}
	return Entries{close: close}, i + 1, nil
}

// Next moves from b[i], just after the previous entry (or the opening
// bracket), to the next entry: it returns the index of its value, not a
// space, or more false and the index after the closing bracket.
func (e *Entries) Next(b []byte, i int) (_ int, more bool, _ error) {
	if i = SkipSpace(b, i); i >= len(b) {
		return 0, false, ErrEnd
	}
	switch c := b[i]; {
	case c == e.close:
		return i + 1, false, nil
	case e.n > 0 && c != ',':
		kind := "object member"
		if e.close == ']' {
			kind = "array element"
		}
		return 0, false, fmt.Errorf("invalid character %q after an %s in JSON", c, kind)
	case e.n > 0:
		if i = SkipSpace(b, i+1); i >= len(b) {
			return 0, false, ErrEnd
		}
	}
	if e.close == ']' {
		e.n++
		return i, true, nil
	}
	if b[i] != '"' {
		return 0, false, fmt.Errorf("invalid character %q looking for the beginning of an object key", b[i])
	}
	end, escaped, err := SkipString(b, i)
	if err != nil {
		return 0, false, err
	}
	v := SkipSpace(b, end)
	switch {
	case v >= len(b):
		return 0, false, ErrEnd
	case b[v] != ':':
		return 0, false, errors.New("missing ':' after an object key in JSON")
	}
	if v = SkipSpace(b, v+1); v >= len(b) {
		return 0, false, ErrEnd
	}
	key := b[i+1 : end-1]
	if escaped {
		if key, _, err = Unquote(b[i:end]); err != nil {
			return 0, false, err
		}
	}
	e.Key, e.KeyStart, e.Escaped = key, i, escaped
	e.n++
	return v, true, nil
}

// Each calls fn for every entry of the object (open is '{') or array
// ('[') at b[i] with the index of its value, which fn reads or skips,
// returning the index after it; Each returns the index after the closing
// bracket. It stops at fn's first error. (fn has the Entries by value:
// a pointer would move them to the heap.)
func Each(b []byte, i int, open byte, fn func(e Entries, i int) (int, error)) (int, error) {
	e, i, err := Open(b, i, open)
	for err == nil {
		var more bool
		if i, more, err = e.Next(b, i); err == nil && !more {
			return i, nil
		} else if err == nil {
			i, err = fn(e, i)
		}
	}
	return 0, err
}

// EachMember calls fn with the key and the span of the value of every
// member of the JSON object that is all of b (spaces around it allowed),
// and the index of the key's opening quote. It stops at fn's first error.
// Keys are as [Entries] gives them.
func EachMember(b []byte, fn func(key []byte, keyStart, valStart, valEnd int) error) error {
	i, err := Each(b, SkipSpace(b, 0), '{', func(e Entries, i int) (int, error) {
		end, _, err := SkipValue(b, i)
		if err == nil {
			err = fn(e.Key, e.KeyStart, i, end)
		}
		return end, err
	})
	if i = SkipSpace(b, i); err == nil && i != len(b) {
		err = fmt.Errorf("invalid character %q after the top-level JSON object", b[i])
	}
	return err
}

// ErrNotArray is returned for a value that is not the array expected.
var ErrNotArray = errors.New("not a JSON array")

// AppendElements appends the span of every element of the JSON array v
// (or nothing for null) to out.
func AppendElements(out [][]byte, v []byte) ([][]byte, error) {
	if string(v) == "null" {
		return out, nil
	}
	if len(v) == 0 || v[0] != '[' {
		return nil, ErrNotArray
	}
	if _, err := Each(v, 0, '[', func(_ Entries, i int) (int, error) {
		end, _, err := SkipValue(v, i)
		if err == nil {
			out = append(out, v[i:end])
		}
		return end, err
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// NoMemberNamed reports whether rest, the bytes after a member's value,
// cannot hold another member named key: nothing in it is escaped and key
// is nowhere written in quotes.
func NoMemberNamed(rest []byte, key string) bool {
	return bytes.IndexByte(rest, '\\') < 0 && !bytes.Contains(rest, []byte(`"`+key+`"`))
}

// MemberSpan returns the span of the JSON object obj to cut to remove its
// first member named key: up to the next member's key if there is one,
// else from the end of the previous member's value (taking the comma),
// else the member alone. from == to if there is no such member or obj is
// malformed.
func MemberSpan(obj []byte, key string) (from, to int) {
	prevEnd, keyStart, valEnd := -1, -1, -1
	e, i, err := Open(obj, SkipSpace(obj, 0), '{')
	for err == nil {
		var more bool
		if i, more, err = e.Next(obj, i); err != nil || !more {
			break
		} else if keyStart >= 0 {
			return keyStart, e.KeyStart
		}
		if i, _, err = SkipValue(obj, i); string(e.Key) == key {
			keyStart, valEnd = e.KeyStart, i
		} else {
			prevEnd = i
		}
	}
	switch {
	case keyStart < 0 || err != nil:
		return 0, 0
	case prevEnd >= 0:
		return prevEnd, valEnd
	}
	return keyStart, valEnd
}

// KeepMembers writes the object obj[start:end] with only the kept members
// (spans in obj, in order) to obj[start:], in place (writing never
// overtakes reading), moves the rest of obj after it, and returns the
// shortened obj.
func KeepMembers(obj []byte, start, end int, kept [][2]int) []byte {
	w := len(AppendKept(obj[:start], obj, kept))
	return obj[:w+copy(obj[w:], obj[end:])]
}

// AppendKept appends the object obj with only the kept members to dst.
func AppendKept(dst, obj []byte, kept [][2]int) []byte {
	dst = append(dst, '{')
	for i, k := range kept {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, obj[k[0]:k[1]]...)
	}
	return append(dst, '}')
}
