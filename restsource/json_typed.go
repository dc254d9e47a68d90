package restsource

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// Decoding JSON into typed Go values without reflection per value: a
// jsonCodec is compiled once per Go type (a struct's fields by JSON name
// and offset, the codecs of its elements) and decodes the plain JSON an
// apiserver writes straight into memory. It decodes as
// kjson.UnmarshalCaseSensitivePreserveInts does (encoding/json's rules,
// names matched case-sensitively, ints kept in interfaces) or not at all:
// a value kjson would decode differently or refuse (a value of another
// type, a member twice, an escaped key, an integer out of range or
// written as a float, malformed JSON, a pointer, slice or map already set
// that kjson would merge into) stops it with errNotPlain, and
// [unmarshalTyped] lets kjson decode the whole value again. That second
// pass starts from what the codec wrote, which changes nothing: the codec
// writes only at paths the JSON holds, what kjson writes there, and links
// a new pointer, slice or map only once it is decoded whole; kjson
// rewrites each of those paths. The kinds of values the codec does not
// decode itself (floats, interfaces, text unmarshalers, maps keyed by
// anything but strings, structs with a ",string" field or an embedded
// pointer, bytes written as an array of numbers) are each handed to kjson
// as a value of their own, which decodes them as it would in place.

// errNotPlain stops a jsonCodec; kjson decodes the value instead.
var errNotPlain = errors.New("restsource: JSON value not plain")

type jsonKind uint8

const (
	jkByKJSON     jsonKind = iota // kjson decodes the value
	jkString                      // a string kind
	jkBool                        // a bool kind
	jkInt                         // a signed integer kind of bits bits
	jkUint                        // an unsigned integer kind of bits bits
	jkPointer                     // a pointer to elem
	jkSlice                       // a slice of elem
	jkBytes                       // a slice of a byte kind: base64 in a string
	jkStringMap                   // a map[string]string, possibly named
	jkMap                         // a map with string keys of elem
	jkStruct                      // fields
	jkUnmarshaler                 // *typ implements json.Unmarshaler
	jkTime                        // metav1.Time (a json.Unmarshaler, decoded here)
)

// jsonCodec decodes JSON into values of typ. Codecs are immutable once
// published in jsonCodecs.
type jsonCodec struct {
	kind jsonKind
	typ  reflect.Type
	bits int        // of jkInt and jkUint
	elem *jsonCodec // of jkPointer, jkSlice and jkMap
	// walked: a value of typ that kjson or its json.Unmarshaler decodes
	// can hold strings the reflective walker interns (planOf).
	walked bool
	// fields of jkStruct, by the index byName gives their JSON names;
	// at most maxJSONFields.
	fields []jsonField
	byName map[string]int
}

// jsonField is a field of a struct, or of a struct embedded in it, as
// encoding/json names it.
type jsonField struct {
	name   string
	offset uintptr // from the start of the outer struct
	codec  *jsonCodec
	// plain: in an ObjectMeta or a TypeMeta, whose strings are not
	// interned here (the metadata's have their own walker).
	plain bool
}

const maxJSONFields = 128 // the members seen are a [2]uint64

var (
	jsonCodecs   sync.Map // reflect.Type to *jsonCodec
	jsonCompiles sync.Mutex

	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	stringType          = reflect.TypeFor[string]()
	metaTimeType        = reflect.TypeFor[metav1.Time]()
)

// uninterned reports whether the strings of a field of type t are left
// alone by the reflective walker, and so by the codec.
func uninterned(t reflect.Type) bool { return t == objectMetaRType || t == typeMetaRType }

// unmarshalTyped decodes the JSON value data into v, a non-nil pointer,
// as kjson.UnmarshalCaseSensitivePreserveInts does.
func unmarshalTyped(data []byte, v any) error {
	_, err := unmarshalInterned(data, v, nil)
	return err
}

// unmarshalInterned is unmarshalTyped interning, with in (if not nil),
// every string it decodes outside an ObjectMeta or TypeMeta, as the
// reflective walker would (intern_any.go). walked reports that it did so
// for every string of v the walker reaches: no value that can hold one
// was left to kjson. (When the codec stops and kjson decodes v again, the
// strings it had interned count as sightings once more in the Interner's
// statistics; the walk then interns kjson's.)
func unmarshalInterned(data []byte, v any, in *interning) (walked bool, _ error) {
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Pointer {
		if c := jsonCodecOf(t.Elem()); c.kind != jkByKJSON {
			p := reflect.ValueOf(v).UnsafePointer()
			if i := jsonwire.SkipSpace(data, 0); i < len(data) && p != nil {
				d := jsonDecoder{b: data, in: in}
				end, err := c.decode(&d, i, p, 0)
				if err == nil && jsonwire.SkipSpace(data, end) == len(data) {
					return in != nil && !d.byKJSON, nil
				}
			}
		}
	}
	return false, kjson.UnmarshalCaseSensitivePreserveInts(data, v)
}

// jsonDecoder is one decoding's state.
type jsonDecoder struct {
	b  []byte
	in *interning // interns the strings decoded, if not nil
	// byKJSON: a value that can hold strings was handed to kjson (or a
	// json.Unmarshaler); they are not interned.
	byKJSON bool
}

// jsonCodecOf returns the codec of t, compiling it (and the codecs it
// refers to) the first time.
func jsonCodecOf(t reflect.Type) *jsonCodec {
	if c, ok := jsonCodecs.Load(t); ok {
		return c.(*jsonCodec)
	}
	jsonCompiles.Lock()
	defer jsonCompiles.Unlock()
	building := map[reflect.Type]*jsonCodec{}
	c := compileJSON(t, building)
	for t, c := range building {
		jsonCodecs.LoadOrStore(t, c)
	}
	return c
}

// compileJSON compiles the codec of t; building holds the codecs of this
// compilation, so that a type that refers to itself refers to its codec.
func compileJSON(t reflect.Type, building map[reflect.Type]*jsonCodec) *jsonCodec {
	if c, ok := jsonCodecs.Load(t); ok {
		return c.(*jsonCodec)
	}
	if c, ok := building[t]; ok {
		return c
	}
	c := &jsonCodec{typ: t}
	building[t] = c
	switch pt := reflect.PointerTo(t); {
	case t == metaTimeType:
		c.kind = jkTime
		return c
	case t.Kind() != reflect.Pointer && pt.Implements(jsonUnmarshalerType):
		c.kind, c.walked = jkUnmarshaler, planOf(t) != nil
		return c
	case t.Kind() != reflect.Pointer && pt.Implements(textUnmarshalerType):
		c.walked = planOf(t) != nil
		return c // encoding/json calls UnmarshalText on strings
	}
	defer func() {
		if c.kind == jkByKJSON {
			c.walked = planOf(t) != nil
		}
	}()
	switch t.Kind() {
	case reflect.String:
		c.kind = jkString
	case reflect.Bool:
		c.kind = jkBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.kind, c.bits = jkInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.kind, c.bits = jkUint, t.Bits()
	case reflect.Pointer:
		c.kind, c.elem = jkPointer, compileJSON(t.Elem(), building)
	case reflect.Slice:
		e := reflect.PointerTo(t.Elem())
		switch {
		case t.Elem().Kind() != reflect.Uint8:
			c.kind, c.elem = jkSlice, compileJSON(t.Elem(), building)
		case !e.Implements(jsonUnmarshalerType) && !e.Implements(textUnmarshalerType):
			c.kind = jkBytes
		}
	case reflect.Map:
		k := t.Key()
		switch {
		case k == stringType && t.Elem() == stringType:
			c.kind = jkStringMap
		case k.Kind() == reflect.String && !reflect.PointerTo(k).Implements(textUnmarshalerType):
			c.kind, c.elem = jkMap, compileJSON(t.Elem(), building)
		}
	case reflect.Struct:
		if fields, ok := compileJSONFields(t, building); ok && len(fields) <= maxJSONFields {
			c.kind, c.fields, c.byName = jkStruct, fields, make(map[string]int, len(fields))
			for i, f := range fields {
				c.byName[f.name] = i
			}
		}
	}
	return c
}

// jsonCandidate is a field found in a struct or a struct embedded in it,
// before encoding/json's rules pick one field per name.
type jsonCandidate struct {
	jsonField
	depth  int
	tagged bool
}

// compileJSONFields returns the fields encoding/json decodes into the
// struct t: each exported field by its tag's name or its own, and the
// fields of embedded structs; of the fields of one name, the shallowest,
// or of those the one tagged, or none. ok is false for what is left to
// kjson whole: a ",string" field, an embedded pointer to a struct, a
// struct embedded twice.
func compileJSONFields(t reflect.Type, building map[reflect.Type]*jsonCodec) (_ []jsonField, ok bool) {
	var all []jsonCandidate
	if !collectJSONFields(t, 0, 0, false, map[reflect.Type]bool{}, &all, building) {
		return nil, false
	}
	byName := map[string][]jsonCandidate{}
	var order []string
	for _, f := range all {
		if byName[f.name] == nil {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var fields []jsonField
	for _, name := range order {
		fs := byName[name]
		top := fs[0].depth
		for _, f := range fs {
			top = min(top, f.depth)
		}
		var at, tagged []jsonCandidate
		for _, f := range fs {
			if f.depth == top {
				at = append(at, f)
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
		}
		switch {
		case len(at) == 1:
			fields = append(fields, at[0].jsonField)
		case len(tagged) == 1:
			fields = append(fields, tagged[0].jsonField)
		} // else: no field of this name; its members are ignored
	}
	return fields, true
}

// collectJSONFields appends the fields of the struct t, embedded depth
// deep at offset base in the outer struct, to out.
func collectJSONFields(t reflect.Type, depth int, base uintptr, plain bool, seen map[reflect.Type]bool, out *[]jsonCandidate, building map[reflect.Type]*jsonCodec) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if hasJSONOption(opts, "string") {
			return false
		}
		if !validJSONTag(name) {
			name = ""
		}
		if sf.Anonymous {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case !sf.IsExported() && ft.Kind() != reflect.Struct:
				continue
			case name == "" && ft.Kind() == reflect.Struct && sf.Type.Kind() == reflect.Pointer:
				return false // kjson allocates it only if one of its members is present
			case name == "" && ft.Kind() == reflect.Struct:
				if !collectJSONFields(ft, depth+1, base+sf.Offset, plain || uninterned(ft), seen, out, building) {
					return false
				}
				continue
			case !sf.IsExported():
				return false
			}
		} else if !sf.IsExported() {
			continue
		}
		tagged := name != ""
		if !tagged {
			name = sf.Name
		}
		f := jsonField{name, base + sf.Offset, compileJSON(sf.Type, building), plain || uninterned(sf.Type)}
		*out = append(*out, jsonCandidate{f, depth, tagged})
	}
	return true
}

func hasJSONOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// validJSONTag is encoding/json's rule for a tag name it uses.
func validJSONTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

// maxJSONDepth is encoding/json's limit on nesting: kjson refuses an
// input with more arrays and objects open at once.
const maxJSONDepth = 10000

// decode decodes the JSON value starting at b[i] (not a space) into the
// value at p, returning the index after it; depth arrays and objects
// enclose the value.
func (c *jsonCodec) decode(d *jsonDecoder, i int, p unsafe.Pointer, depth int) (int, error) {
	b := d.b
	if b[i] == 'n' && c.kind != jkUnmarshaler && c.kind != jkByKJSON {
		return c.null(b, i, p)
	}
	switch c.kind {
	case jkString:
		s, end, ok := d.str(i)
		if !ok {
			return 0, errNotPlain
		}
		*(*string)(p) = s
		return end, nil
	case jkBool:
		switch {
		case hasLiteral(b, i, "true"):
			*(*bool)(p) = true
			return i + 4, nil
		case hasLiteral(b, i, "false"):
			*(*bool)(p) = false
			return i + 5, nil
		}
		return 0, errNotPlain
	case jkInt, jkUint:
		return c.integer(b, i, p)
	case jkPointer:
		if *(*unsafe.Pointer)(p) != nil {
			return 0, errNotPlain
		}
		e := reflect.New(c.elem.typ).UnsafePointer()
		end, err := c.elem.decode(d, i, e, depth)
		if err != nil {
			return 0, err
		}
		*(*unsafe.Pointer)(p) = e
		return end, nil
	case jkSlice:
		return c.slice(d, i, p, depth+1)
	case jkBytes:
		if b[i] == '"' {
			return decodeBase64(b, i, (*[]byte)(p))
		}
	case jkStringMap:
		return c.stringMap(d, i, p, depth+1)
	case jkMap:
		return c.mapOf(d, i, p, depth+1)
	case jkStruct:
		if b[i] != '{' {
			return 0, errNotPlain
		}
		return c.object(d, i, p, depth+1)
	case jkTime:
		return decodeTime(b, i, (*metav1.Time)(p))
	case jkUnmarshaler:
		end, err := validValue(b, i, depth)
		if err != nil {
			return 0, err
		}
		d.byKJSON = d.byKJSON || c.walked
		if reflect.NewAt(c.typ, p).Interface().(json.Unmarshaler).UnmarshalJSON(b[i:end]) != nil {
			return 0, errNotPlain
		}
		return end, nil
	}
	d.byKJSON = d.byKJSON || c.walked
	end, err := valueSpan(b, i, depth) // kjson's, as a value of its own
	if err != nil || kjson.UnmarshalCaseSensitivePreserveInts(b[i:end], reflect.NewAt(c.typ, p).Interface()) != nil {
		return 0, errNotPlain
	}
	return end, nil
}

// plainString returns the bytes of the JSON string at b[i] if it has no
// escapes (they are then the string), and the index after it.
func plainString(b []byte, i int) (raw []byte, end int, ok bool) {
	if b[i] != '"' {
		return nil, 0, false
	}
	end, escaped, err := jsonwire.SkipString(b, i)
	if err != nil || escaped {
		return nil, 0, false
	}
	return b[i+1 : end-1], end, true
}

// decodeBase64 decodes a string of standard base64 into a new slice, as
// encoding/json decodes a string into a []byte.
func decodeBase64(b []byte, i int, p *[]byte) (int, error) {
	src, end, ok := plainString(b, i)
	if !ok {
		return 0, errNotPlain
	}
	dst := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
	n, err := base64.StdEncoding.Decode(dst, src)
	if err != nil {
		return 0, errNotPlain
	}
	*p = dst[:n]
	return end, nil
}

// null decodes a null: pointers, slices and maps become nil, the rest is
// left as it was.
func (c *jsonCodec) null(b []byte, i int, p unsafe.Pointer) (int, error) {
	if !hasLiteral(b, i, "null") {
		return 0, errNotPlain
	}
	switch c.kind {
	case jkPointer, jkStringMap, jkMap:
		*(*unsafe.Pointer)(p) = nil
	case jkSlice, jkBytes:
		*(*sliceHeader)(p) = sliceHeader{}
	case jkTime:
		*(*metav1.Time)(p) = metav1.Time{} // its UnmarshalJSON's null
	}
	return i + 4, nil
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// str decodes the JSON string at b[i] as encoding/json does, interned if
// d interns.
func (d *jsonDecoder) str(i int) (_ string, end int, ok bool) {
	b := d.b
	if b[i] != '"' {
		return "", 0, false
	}
	end, _, err := jsonwire.SkipString(b, i)
	if err != nil {
		return "", 0, false
	}
	c, verbatim, err := jsonwire.Unquote(b[i:end])
	switch {
	case err != nil:
		return "", 0, false
	case verbatim:
		return d.intern(c), end, true
	}
	s := unsafe.String(unsafe.SliceData(c), len(c)) // Unquote's own string
	if d.in != nil && s != "" && len(s) <= MaxInternedLen {
		s = d.in.String(s)
	}
	return s, end, true
}

// intern returns the string of raw, interned if d interns
// (as the walker does: what is not empty and at most MaxInternedLen).
func (d *jsonDecoder) intern(raw []byte) string {
	if d.in != nil && len(raw) > 0 && len(raw) <= MaxInternedLen {
		return d.in.bytes(raw)
	}
	return string(raw)
}

// integer decodes an integer written without a fraction or an exponent
// that fits c.bits.
func (c *jsonCodec) integer(b []byte, i int, p unsafe.Pointer) (int, error) {
	neg := b[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i-start >= 19 {
			return 0, errNotPlain // may not fit; kjson decides
		}
		u = u*10 + uint64(b[i]-'0')
	}
	if i == start || b[start] == '0' && i-start > 1 || i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, errNotPlain
	}
	switch {
	case c.kind == jkUint && (neg || c.bits < 64 && u >= 1<<c.bits):
		return 0, errNotPlain
	case c.kind == jkInt && (neg && u > 1<<(c.bits-1) || !neg && u >= 1<<(c.bits-1)):
		return 0, errNotPlain
	case neg:
		u = -u // two's complement: the low c.bits bits are the int's
	}
	switch c.bits {
	case 8:
		*(*uint8)(p) = uint8(u)
	case 16:
		*(*uint16)(p) = uint16(u)
	case 32:
		*(*uint32)(p) = uint32(u)
	default:
		*(*uint64)(p) = u
	}
	return i, nil
}

// slice decodes an array (at depth) into a new slice of exactly its
// length: the elements are counted first (a skip over the array, about a
// tenth of a pod's decoding), which spares growing a slice by doubling and
// copying it to its length for the cache.
func (c *jsonCodec) slice(d *jsonDecoder, i int, p unsafe.Pointer, depth int) (int, error) {
	b := d.b
	if (*sliceHeader)(p).data != nil || depth > maxJSONDepth {
		return 0, errNotPlain
	}
	n := 0
	if _, err := jsonwire.Each(b, i, '[', func(_ jsonwire.Entries, i int) (int, error) {
		n++
		end, _, err := jsonwire.SkipValue(b, i)
		return end, err
	}); err != nil {
		return 0, errNotPlain
	}
	s := reflect.MakeSlice(c.typ, n, n)
	data, size, k := s.UnsafePointer(), c.elem.typ.Size(), 0
	end, err := jsonwire.Each(b, i, '[', func(_ jsonwire.Entries, i int) (int, error) {
		if k == n {
			return 0, errNotPlain
		}
		k++
		return c.elem.decode(d, i, unsafe.Add(data, uintptr(k-1)*size), depth)
	})
	if err != nil {
		return 0, err
	}
	*(*sliceHeader)(p) = sliceHeader{data, n, n}
	return end, nil
}

// members calls fn with the key and the start of the value of each
// member of the JSON object at b[i] ([jsonwire.Each]). A key with escapes
// stops it.
func members(b []byte, i int, fn func(key []byte, i int) (int, error)) (int, error) {
	return jsonwire.Each(b, i, '{', func(e jsonwire.Entries, i int) (int, error) {
		if e.Escaped {
			return 0, errNotPlain
		}
		return fn(e.Key, i)
	})
}

// object decodes an object (at depth) into the struct at p: each member
// into its field, once; the others are skipped (and checked, as kjson
// checks all).
func (c *jsonCodec) object(d *jsonDecoder, i int, p unsafe.Pointer, depth int) (int, error) {
	b := d.b
	if depth > maxJSONDepth {
		return 0, errNotPlain
	}
	var seen [maxJSONFields / 64]uint64
	return members(b, i, func(key []byte, i int) (int, error) {
		k, ok := c.byName[string(key)]
		if !ok {
			return validValue(b, i, depth)
		}
		if seen[k/64]&(1<<(k%64)) != 0 {
			return 0, errNotPlain // kjson decodes the second into the first
		}
		seen[k/64] |= 1 << (k % 64)
		f := &c.fields[k]
		if f.plain && d.in != nil {
			in := d.in
			d.in = nil
			end, err := f.codec.decode(d, i, unsafe.Add(p, f.offset), depth)
			d.in = in
			return end, err
		}
		return f.codec.decode(d, i, unsafe.Add(p, f.offset), depth)
	})
}

// stringMap decodes an object of strings into a new map[string]string.
func (c *jsonCodec) stringMap(d *jsonDecoder, i int, p unsafe.Pointer, depth int) (int, error) {
	b := d.b
	if *(*unsafe.Pointer)(p) != nil || depth > maxJSONDepth {
		return 0, errNotPlain
	}
	m := map[string]string{}
	end, err := members(b, i, func(key []byte, i int) (int, error) {
		if !utf8.Valid(key) {
			return 0, errNotPlain
		}
		if hasLiteral(b, i, "null") {
			m[d.intern(key)] = ""
			return i + 4, nil
		}
		s, end, ok := d.str(i)
		if !ok {
			return 0, errNotPlain
		}
		m[d.intern(key)] = s
		return end, nil
	})
	if err != nil {
		return 0, err
	}
	*(*map[string]string)(p) = m
	return end, nil
}

// mapOf decodes an object into a new map: each value into a zero element.
func (c *jsonCodec) mapOf(d *jsonDecoder, i int, p unsafe.Pointer, depth int) (int, error) {
	b := d.b
	if *(*unsafe.Pointer)(p) != nil || depth > maxJSONDepth {
		return 0, errNotPlain
	}
	m := reflect.MakeMap(c.typ)
	elem := reflect.New(c.elem.typ).Elem()
	end, err := members(b, i, func(key []byte, i int) (int, error) {
		if !utf8.Valid(key) {
			return 0, errNotPlain
		}
		elem.SetZero()
		end, err := c.elem.decode(d, i, elem.Addr().UnsafePointer(), depth)
		if err != nil {
			return 0, err
		}
		m.SetMapIndex(reflect.ValueOf(d.intern(key)).Convert(c.typ.Key()), elem)
		return end, nil
	})
	if err != nil {
		return 0, err
	}
	*(*unsafe.Pointer)(p) = m.UnsafePointer()
	return end, nil
}

// validValue returns the index after the JSON value at b[i] (inside
// depth arrays and objects), which it checks as kjson checks a whole
// input before decoding it.
func validValue(b []byte, i, depth int) (int, error) {
	if b[i] == '"' {
		if end, escaped, err := jsonwire.SkipString(b, i); err == nil && !escaped {
			return end, nil // no control characters, no escapes to check
		}
	}
	end, err := valueSpan(b, i, depth)
	if err != nil || !json.Valid(b[i:end]) {
		return 0, errNotPlain
	}
	return end, nil
}

// valueSpan returns the index after the JSON value at b[i], inside depth
// arrays and objects, if its own nesting keeps the whole within
// maxJSONDepth (checked on its own, as kjson checks a value handed to it,
// a deeper one would pass).
func valueSpan(b []byte, i, depth int) (int, error) {
	end, nested, err := jsonwire.SkipValue(b, i)
	if err != nil || depth+nested > maxJSONDepth {
		return 0, errNotPlain
	}
	return end, nil
}

// decodeTime decodes a metav1.Time as its UnmarshalJSON does: an RFC 3339
// string, in the local time zone.
func decodeTime(b []byte, i int, t *metav1.Time) (int, error) {
	raw, end, ok := plainString(b, i)
	if !ok {
		return 0, errNotPlain
	}
	pt, err := time.Parse(time.RFC3339, unsafe.String(unsafe.SliceData(raw), len(raw))) // not kept: Parse copies what it keeps
	if err != nil {
		return 0, errNotPlain
	}
	t.Time = pt.Local()
	return end, nil
}
