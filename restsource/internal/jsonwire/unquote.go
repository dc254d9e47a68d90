package jsonwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Unquote returns the content of the JSON string s (quotes included, as
// [SkipString] finds it) as encoding/json decodes it: escapes resolved,
// an unpaired surrogate and each byte of invalid UTF-8 replaced by
// U+FFFD. When there is neither, the content is s's own bytes, not copied
// (verbatim reports that); else encoding/json decodes it into a new slice.
func Unquote(s []byte) (content []byte, verbatim bool, err error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false, fmt.Errorf("expected a JSON string, got %.40q", s)
	}
	if c := s[1 : len(s)-1]; bytes.IndexByte(c, '\\') < 0 && ValidUTF8(c) {
		return c, true, nil
	}
	var t string
	if err := json.Unmarshal(s, &t); err != nil {
		return nil, false, err
	}
	return []byte(t), false, nil
}

// ValidUTF8 reports whether b is valid UTF-8, quickly if it is ASCII (a
// key as [Entries] gives it is its bytes as written, which the decoders
// replace if not valid).
func ValidUTF8(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return utf8.Valid(b)
		}
	}
	return true
}
