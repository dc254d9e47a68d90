package restsource

import (
	"bytes"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// Decoding with Options.ShareRepeated: the parts of an object that repeat
// across objects (the metadata's labels, annotations and owner references;
// a ConfigMap's data; for pods what the pods of a template have in common:
// a container's env, ports, probes, resources and security context, the
// pod's affinity, tolerations and volume sources, ...) are looked up in the
// Interner's table of parts (intern_parts.go) by their encoding, and a hit
// takes the shared decoded part without decoding it. Everything else is
// decoded by the generated decoder (protobuf) or the typed one (JSON), and
// interned as the walkers in intern_objects.go would. The result equals
// the plain decoding's (the differential tests check it); its shared parts
// must not be modified.
//
// Each Go type that holds parts is declared once, as a message (the
// declarations are in parts_kinds.go): its fields that are parts, each by
// protobuf number and JSON name, with how a new part is interned; what
// the rest of it interns. One protobuf walker ([message.proto]) and one
// JSON walker ([message.json], [message.cut] at the top of an object) read
// every declaration, over one wire layer (parts_wire.go). The kinds
// decoded in parts are those partKinds lists; every other kind shares its
// metadata's parts only.

// message declares how ShareRepeated decodes the Go type P.
type message[P any, PP ptrUnmarshaler[P]] struct {
	fields []field[P]
	// other decodes the protobuf runs of P's fields that are not parts
	// (nil: P's generated decoder).
	other func(d *partsDecoder, run []byte, p *P) error
	// rest interns what other, or the typed JSON decoder, decoded (nil:
	// nothing to intern).
	rest func(in *interning, p *P)

	byNum [64]uint8      // index+1 in fields, by protobuf number
	set   fieldSet       // the fields' protobuf numbers
	names map[string]int // the JSON names of the fields cut from JSON, to their numbers
}

// ptrUnmarshaler is *P with a generated protobuf decoder.
type ptrUnmarshaler[P any] interface {
	*P
	unmarshaler
}

// field is one field of P that is a part.
type field[P any] struct {
	num protowire.Number // its protobuf number: a length-delimited field below 64
	// name is its JSON member name, or "" if its JSON is left to the
	// typed decoder (and interned by the message's rest).
	name   string
	offset uintptr // of the field in P (the declaration test checks num and name against P's tags)
	// proto decodes the run of field num into p; json the member's value
	// (never null) into p.
	proto func(d *partsDecoder, run []byte, p *P) error
	json  func(d *partsDecoder, v []byte, p *P) error
}

// declarations are every message declared, for the declaration test.
var declarations []declaration

// declaration is a message seen from outside: its Go type and fields.
type declaration interface {
	goType() reflect.Type
	declared() []declaredField
}

// declaredField is a field as declared: its numbers and names, to check
// against the Go type's tags.
type declaredField struct {
	num    protowire.Number
	name   string
	offset uintptr
}

func (m *message[P, PP]) goType() reflect.Type { return reflect.TypeFor[P]() }

func (m *message[P, PP]) declared() []declaredField {
	out := make([]declaredField, len(m.fields))
	for i, f := range m.fields {
		out[i] = declaredField{f.num, f.name, f.offset}
	}
	return out
}

func newMessage[P any, PP ptrUnmarshaler[P]](rest func(*interning, *P), fields ...field[P]) *message[P, PP] {
	m := &message[P, PP]{fields: fields, rest: rest, names: map[string]int{}}
	declarations = append(declarations, m)
	for i, f := range fields {
		if f.num <= 0 || f.num >= 64 || m.set.has(f.num) {
			panic("restsource: a message declares field " + f.name + " twice or out of range")
		}
		m.set |= 1 << f.num
		m.byNum[f.num] = uint8(i + 1)
		if f.name != "" {
			m.names[f.name] = int(f.num)
		}
	}
	return m
}

func (m *message[P, PP]) field(num protowire.Number) *field[P] { return &m.fields[m.byNum[num]-1] }

// proto decodes the protobuf message msg into p: each run of a declared
// field by the field, the runs between by other, then rest.
func (m *message[P, PP]) proto(d *partsDecoder, msg []byte, p *P) error {
	other := PP(p).Unmarshal
	if m.other != nil {
		other = func(run []byte) error { return m.other(d, run, p) }
	}
	err := eachPart(msg, m.set.has, other, func(num protowire.Number, run []byte) error {
		return m.field(num).proto(d, run, p)
	})
	if err == nil && m.rest != nil {
		m.rest(d.in, p)
	}
	return err
}

// json decodes the JSON object v into p: the members that are parts by
// their fields, the rest by the typed decoder (from a copy without them),
// then rest.
func (m *message[P, PP]) json(d *partsDecoder, v []byte, p *P) error {
	c := d.takeCuts()
	defer d.putCuts(c)
	if !cutMembers(v, m.names, c) {
		return errUnsplittable
	}
	d.scratch = jsonwire.AppendKept(d.scratch[:0], v, c.kept)
	if err := unmarshalTyped(d.scratch, p); err != nil {
		return err
	}
	if err := m.jsonParts(d, v, c.nums, c.vals, p); err != nil {
		return err
	}
	if m.rest != nil {
		m.rest(d.in, p)
	}
	return nil
}

// cut decodes the members of the JSON object obj that are parts into p,
// and returns obj without them (rewritten in place) for the typed decoder
// to decode into p; rest is not called (the caller's walker interns the
// object). ok false leaves obj as it was and p zero.
func (m *message[P, PP]) cut(d *partsDecoder, obj []byte, p *P) (_ []byte, ok bool) {
	c := d.takeCuts()
	defer d.putCuts(c)
	if !cutMembers(obj, m.names, c) || m.jsonParts(d, obj, c.nums, c.vals, p) != nil {
		var zero P
		*p = zero
		return obj, false
	}
	if len(c.nums) == 0 {
		return obj, true
	}
	return jsonwire.KeepMembers(obj, jsonwire.SkipSpace(obj, 0), len(bytes.TrimRight(obj, " \t\r\n")), c.kept), true
}

// jsonParts decodes the values (spans in obj) of the members numbered nums
// into p.
func (m *message[P, PP]) jsonParts(d *partsDecoder, obj []byte, nums []int, vals [][2]int, p *P) error {
	for i, num := range nums {
		if err := m.field(protowire.Number(num)).json(d, obj[vals[i][0]:vals[i][1]], p); err != nil {
			return err
		}
	}
	return nil
}

// unmarshalParts decodes msg, the protobuf message of obj (whose
// ObjectMeta is om), with shared parts (and managedFields left out if
// strip): whole as kind declares it, or (kind nil) its metadata only,
// which it reports. On an error obj is left partly decoded, and the caller
// decodes it in full.
func unmarshalParts(msg []byte, obj unmarshaler, om *metav1.ObjectMeta, strip bool, in *interning, kind *kindParts) (whole bool, err error) {
	d := newPartsDecoder(in, strip)
	defer d.release()
	if kind != nil {
		return true, kind.proto(d, msg, obj)
	}
	return false, eachRun(msg, protoMetadataField, obj.Unmarshal, func(meta []byte) error {
		return objectMetaParts.proto(d, meta, om)
	})
}

// kindParts is how ShareRepeated decodes the objects of one kind, whole.
type kindParts struct {
	proto func(d *partsDecoder, msg []byte, obj any) error
	cut   func(d *partsDecoder, obj []byte, into any) ([]byte, bool)
}

// addKind adds m, the declaration of a kind whose objects are *P, to
// partKinds.
func addKind[P any, PP ptrUnmarshaler[P]](m *message[P, PP]) {
	partKinds[reflect.TypeFor[*P]()] = &kindParts{
		proto: func(d *partsDecoder, msg []byte, obj any) error { return m.proto(d, msg, obj.(*P)) },
		cut:   func(d *partsDecoder, obj []byte, into any) ([]byte, bool) { return m.cut(d, obj, into.(*P)) },
	}
}

// prepare interns the strings of a newly decoded part (before it is
// shared); it may replace the part's value (a slice by its clipped self).
type prepare[F any] func(d *partsDecoder, f *F)

// interned is the prepare that calls fn, an interning walker.
func interned[F any](fn func(*interning, F)) prepare[F] {
	return func(d *partsDecoder, f *F) { fn(d.in, *f) }
}

// shared declares the field of P at at as a part: shared whole by every
// object whose encoding of it is alike, prep (if set) interning a new one.
func shared[P any, PP ptrUnmarshaler[P], F any](num protowire.Number, name string, at func(*P) *F, prep prepare[F]) field[P] {
	return sharedPart[P, PP](num, name, at, prep, false)
}

// sharedSlice is shared for a slice, clipped before it is shared (so that
// an append to one object's slice never writes into another's).
func sharedSlice[P any, PP ptrUnmarshaler[P], E any](num protowire.Number, name string, at func(*P) *[]E, prep prepare[[]E]) field[P] {
	return sharedPart[P, PP](num, name, at, clipThen(prep), false)
}

// sharedMounts is sharedSlice for volume mounts: a run that names one of
// the pod's own volumes (see partsDecoder.own) is decoded without the
// table, which no other pod's run would hit.
func sharedMounts[P any, PP ptrUnmarshaler[P], E any](num protowire.Number, name string, at func(*P) *[]E, prep prepare[[]E]) field[P] {
	return sharedPart[P, PP](num, name, at, clipThen(prep), true)
}

func clipThen[E any](prep prepare[[]E]) prepare[[]E] {
	return func(d *partsDecoder, s *[]E) {
		*s = slices.Clip(*s)
		if prep != nil {
			prep(d, s)
		}
	}
}

func sharedPart[P any, PP ptrUnmarshaler[P], F any](num protowire.Number, name string, at func(*P) *F, prep prepare[F], skipOwn bool) field[P] {
	site := newSite()
	return field[P]{num: num, name: name, offset: offsetOf(at),
		proto: func(d *partsDecoder, run []byte, p *P) (err error) {
			decode := func(run []byte) (F, error) {
				var q P // the field's run decodes as a P holding the field only
				if err := PP(&q).Unmarshal(run); err != nil {
					var zero F
					return zero, err
				}
				f := *at(&q)
				if prep != nil {
					prep(d, &f)
				}
				return f, nil
			}
			if skipOwn && d.mine(run) {
				*at(p), err = decode(run)
			} else {
				*at(p), err = sharePart(d.t, site, run, decode)
			}
			return err
		},
		json: func(d *partsDecoder, v []byte, p *P) (err error) {
			*at(p), err = sharedJSON(d, site, v, prep)
			return err
		},
	}
}

// sharedJSON decodes the JSON value v of a part at site: the shared copy
// if the table holds one, else decoded by the typed decoder, prep (if set)
// interning it, and offered to the table.
func sharedJSON[F any](d *partsDecoder, site partSite, v []byte, prep prepare[F]) (F, error) {
	return sharePart(d.t, jsonSite(site), v, func(v []byte) (F, error) {
		var f F
		if err := kjson.UnmarshalCaseSensitivePreserveInts(v, &f); err != nil {
			return f, err
		}
		if prep != nil {
			prep(d, &f)
		}
		return f, nil
	})
}

// custom declares the field of P at at as decoded by its own functions,
// given the field's site: proto from the field's run, json from the
// member's value (nil if name is "").
func custom[P any, F any](num protowire.Number, name string, at func(*P) *F,
	proto func(d *partsDecoder, site partSite, run []byte) (F, error),
	json func(d *partsDecoder, site partSite, v []byte) (F, error)) field[P] {
	site := newSite()
	f := field[P]{num: num, name: name, offset: offsetOf(at),
		proto: func(d *partsDecoder, run []byte, p *P) (err error) {
			*at(p), err = proto(d, site, run)
			return err
		},
	}
	if json != nil {
		f.json = func(d *partsDecoder, v []byte, p *P) (err error) {
			*at(p), err = json(d, site, v)
			return err
		}
	}
	return f
}

// nested declares the field of P at at, a message of its own (given once:
// its run is one field), as decoded by its declaration m.
func nested[P any, Q any, QP ptrUnmarshaler[Q]](num protowire.Number, name string, at func(*P) *Q, m *message[Q, QP]) field[P] {
	return field[P]{num: num, name: name, offset: offsetOf(at),
		proto: func(d *partsDecoder, run []byte, p *P) error {
			v, err := single(run)
			if err != nil {
				return err
			}
			return m.proto(d, v, at(p))
		},
		json: func(d *partsDecoder, v []byte, p *P) error { return m.json(d, v, at(p)) },
	}
}

// offsetOf returns the offset in P of the field at returns.
func offsetOf[P, F any](at func(*P) *F) uintptr {
	var p P
	return uintptr(unsafe.Pointer(at(&p))) - uintptr(unsafe.Pointer(&p))
}

// sites counts the sites handed out.
var sites partSite

// newSite returns a site no other part has.
func newSite() partSite {
	sites++
	if sites >= 0x80 { // jsonSite sets the top bit
		panic("restsource: more than 127 sites of parts")
	}
	return sites
}

// jsonSite is the site of a part's JSON encoding: never equal to a
// protobuf one.
func jsonSite(s partSite) partSite { return s | 0x80 }

// partsDecoder is one object's decoding with shared parts.
type partsDecoder struct {
	in      *interning
	t       *partTable
	strip   bool     // leave managedFields out (Options.StripManagedFields)
	volumes []string // the pod's volume names, for its mounts
	// own holds the names of the pod's volumes that no object had before
	// (a service-account token volume's kube-api-access-<random>): the
	// runs that name them are the pod's own, not worth a lookup.
	own [][]byte
	// scratch holds the JSON of an object without its parts, for the
	// typed decoder.
	scratch []byte
	// cuts are the memberCuts free for a message's JSON to use; each
	// level of nesting takes one and puts it back when done.
	cuts []*memberCuts
}

// takeCuts returns memberCuts for one object's members, to be put back
// with putCuts once its spans are no longer read.
func (d *partsDecoder) takeCuts() *memberCuts {
	if n := len(d.cuts); n > 0 {
		c := d.cuts[n-1]
		d.cuts = d.cuts[:n-1]
		return c
	}
	return new(memberCuts)
}

func (d *partsDecoder) putCuts(c *memberCuts) { d.cuts = append(d.cuts, c) }

// partsDecoders keeps partsDecoders for reuse: one passed to the
// declarations' functions escapes, and would cost an allocation per object.
var partsDecoders = sync.Pool{New: func() any { return new(partsDecoder) }}

// newPartsDecoder returns a partsDecoder for one object, to be released.
func newPartsDecoder(in *interning, strip bool) *partsDecoder {
	d := partsDecoders.Get().(*partsDecoder)
	d.in, d.t, d.strip = in, &in.Interner.parts, strip
	return d
}

// maxScratch is the largest scratch buffer a released partsDecoder keeps.
const maxScratch = 64 << 10

// release returns d to partsDecoders, holding nothing of its object.
func (d *partsDecoder) release() {
	clear(d.volumes)
	clear(d.own)
	d.in, d.t, d.volumes, d.own = nil, nil, d.volumes[:0], d.own[:0]
	if cap(d.scratch) > maxScratch {
		d.scratch = nil
	}
	partsDecoders.Put(d)
}

// mine reports whether run holds the name of one of the pod's own
// volumes.
func (d *partsDecoder) mine(run []byte) bool {
	for _, name := range d.own {
		if bytes.Contains(run, name) {
			return true
		}
	}
	return false
}
