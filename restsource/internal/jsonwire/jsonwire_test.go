package jsonwire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzUnquote: Unquote decodes a string as encoding/json decodes it, and
// fails where it fails; verbatim content is the bytes as written.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"abc"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20ac"`, `"\ud83d\ude00"`,
		`"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, `"\ud83d\uzzzz"`, "\"\xff\xc3\"", `"\'"`, `"\x"`, `"\u12"`, "\"a\x01\"", `"a"b"`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if end, _, err := SkipString(s, 0); err != nil || end != len(s) {
			return
		}
		var want string
		werr := json.Unmarshal(s, &want)
		got, verbatim, err := Unquote(s)
		switch {
		case (err == nil) != (werr == nil):
			t.Fatalf("Unquote(%q) = %q, %v; encoding/json: %q, %v", s, got, err, want, werr)
		case err == nil && string(got) != want:
			t.Fatalf("Unquote(%q) = %q, encoding/json: %q", s, got, want)
		case err == nil && verbatim != bytes.Equal(got, s[1:len(s)-1]):
			t.Fatalf("Unquote(%q): verbatim %v", s, verbatim)
		}
	})
}

// TestSkipValueLikeEncodingJSON: on valid JSON, SkipValue ends where the
// value ends and counts its nesting.
func TestSkipValueLikeEncodingJSON(t *testing.T) {
	for doc, depth := range map[string]int{`{}`: 1, `[[],{"a":[1,{"b":"]}"}]}]`: 4, `"x\"y"`: 0, `-1.5e+3`: 0, `true`: 0, `{"k":"\\"}`: 1} {
		end, d, err := SkipValue([]byte(doc+` ,`), 0)
		if err != nil || end != len(doc) || d != depth {
			t.Errorf("SkipValue(%s) = %d, %d, %v; want %d, %d", doc, end, d, err, len(doc), depth)
		}
	}
	for _, doc := range []string{`{]`, `[}`, `{"a":[1}`, `{"a`, `[`, `"a`, `]`, ",", "\"\x01\""} {
		if _, _, err := SkipValue([]byte(doc), 0); err == nil {
			t.Errorf("SkipValue(%q) succeeds", doc)
		}
	}
}

// TestScannerSplitAnywhere: a value scanned in pieces of any length ends
// where SkipValue says it ends, or fails as it fails, at any depth.
func TestScannerSplitAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	docs := []string{strings.Repeat("[", 150) + `"\\\"]"` + strings.Repeat("]", 150), `{"a":"x\\","b":[{"c":"\""}]} rest`,
		strings.Repeat("[{", 40) + strings.Repeat("}]", 40), `{"a":[}`, "[\"\x01\"]", strings.Repeat("[", 70) + strings.Repeat("]", 69) + "}"}
	for _, doc := range docs {
		wantEnd, wantDepth, wantErr := SkipValue([]byte(doc), 0)
		for range 50 {
			var s Scanner
			b, at, end := []byte(doc), 0, -1
			var err error
			for at < len(b) && end < 0 && err == nil {
				n := min(len(b)-at, 1+r.IntN(9))
				if end, err = s.Scan(b[at : at+n]); end >= 0 {
					end += at
				}
				at += n
			}
			if (err != nil) != (wantErr != nil) || err == nil && (end != wantEnd || s.most != wantDepth) {
				t.Fatalf("%.30s: in pieces %d, %d, %v; whole %d, %d, %v", doc, end, s.most, err, wantEnd, wantDepth, wantErr)
			}
		}
	}
}

func TestEachMember(t *testing.T) {
	var got []string
	err := EachMember([]byte(` {"a" : 1, "b\u0063":{"x":[]} ,"":"s"} `), func(key []byte, ks, vs, ve int) error {
		got = append(got, string(key))
		return nil
	})
	if err != nil || strings.Join(got, ",") != "a,bc," {
		t.Errorf("EachMember: %q, %v", got, err)
	}
	for _, doc := range []string{`{"a":1,}`, `{"a":1 "b":2}`, `{"a" 1}`, `{"a":1} x`, `[]`, `{`, `{1:2}`} {
		if err := EachMember([]byte(doc), func([]byte, int, int, int) error { return nil }); err == nil {
			t.Errorf("EachMember(%s) succeeds", doc)
		}
	}
	elems, err := AppendElements(nil, []byte(`[ 1 ,"a", {"b":[2]} ]`))
	if err != nil || len(elems) != 3 || string(elems[2]) != `{"b":[2]}` {
		t.Errorf("AppendElements: %q, %v", elems, err)
	}
}

func TestNoMemberNamed(t *testing.T) {
	for rest, want := range map[string]bool{
		``: true, `,"spec":{}}`: true, `,"spec":{"f":"metadata.name"}}`: true, `,"f:metadata":{}}`: true,
		`,"metadata":{}}`: false, `,"metadata" :{}}`: false, `,"x":"a\\b"}`: false, `,"\u006detadata":{}}`: false,
		`metadata"`: true, `"metadata`: true, `,"metadatas":1,"metadata":{}}`: false,
	} {
		if got := NoMemberNamed([]byte(rest), "metadata"); got != want {
			t.Errorf("NoMemberNamed(%s) = %v, want %v", rest, got, want)
		}
	}
}

// TestMemberSpan: cutting the span MemberSpan finds leaves the object
// without the member, its other members and separators intact.
func TestMemberSpan(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1,"m":[1,{"m":2}],"b":2}`, `{"a":1,"b":2}`},
		{`{"a":1, "m":{}}`, `{"a":1}`},
		{`{ "m" : "x" }`, `{  }`},
		{`{"m":1,"m":2}`, `{"m":2}`},
		{`{"\u006d":1,"a":2}`, `{"a":2}`},
		{`{"a":1}`, `{"a":1}`},
		{`{"m":1,"a":`, `{"m":1,"a":`}, // malformed: nothing to cut
	} {
		b := []byte(c.in)
		from, to := MemberSpan(b, "m")
		if got := string(b[:from]) + string(b[to:]); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

// TestKeepMembers: the kept members are written in place, the rest of the
// buffer moved after them.
func TestKeepMembers(t *testing.T) {
	b := []byte(`[{"a":1, "b":2 ,"c":3}, 4]`)
	got := KeepMembers(b, 1, 22, [][2]int{{2, 7}, {16, 21}})
	if string(got) != `[{"a":1,"c":3}, 4]` {
		t.Fatalf("got %s", got)
	}
}
