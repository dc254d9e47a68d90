package jsonwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// Unquote returns the content of the JSON string s (quotes included, as
// [SkipString] finds it) as encoding/json decodes it: escapes resolved,
// an unpaired surrogate and each byte of invalid UTF-8 replaced by
// U+FFFD. When there is neither, the content is s's own bytes, not copied
// (verbatim reports that); else encoding/json decodes it into a new
// string, whose bytes it returns: they are not to be modified.
func Unquote(s []byte) (content []byte, verbatim bool, err error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false, fmt.Errorf("expected a JSON string, got %.40q", s)
	}
	if c := s[1 : len(s)-1]; bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		return c, true, nil
	}
	var t string
	if err := json.Unmarshal(s, &t); err != nil {
		return nil, false, err
	}
	return unsafe.Slice(unsafe.StringData(t), len(t)), false, nil
}
