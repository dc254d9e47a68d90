package restsource

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/restsource/internal/wire"
)

// A projection is a user-declared slim type T holding only some fields of
// the type the server serves (Options.ProjectionOf): restsource decodes T
// straight from the server's bytes, skipping every field T does not
// declare, so the full object is never built. T declares its fields with
// the source type's JSON names and protobuf field numbers (copied from
// the source type's own struct tags), so that JSON is decoded by the
// usual typed decoder (which ignores fields T lacks) and protobuf by a
// decoder planned here from T's protobuf tags.

// protoPlan decodes a protobuf message into a struct by its fields'
// protobuf tags, as the generated Unmarshal methods would; fields whose
// numbers it does not know are skipped.
type protoPlan struct {
	fields []*fieldPlan // by protobuf field number (nil: skipped)
}

// fieldKind is how a field is decoded.
type fieldKind int

const (
	kindString      fieldKind = iota // string (or a named string type)
	kindBytes                        // []byte
	kindBool                         // varint != 0
	kindInt                          // varint, truncated to the field's size
	kindUint                         // varint, truncated to the field's size
	kindUnmarshaler                  // a message with a generated Unmarshal method
	kindMessage                      // a message decoded by a plan
	kindPointer                      // *elem, allocated on first use
	kindSlice                        // repeated elem, one element per field
	kindMap                          // map entries: key = 1, value = 2
)

// fieldPlan decodes one field (or an element: of a slice, a pointer or a
// map).
type fieldPlan struct {
	index int // in the struct; -1 for an element
	kind  fieldKind
	typ   reflect.Type
	wire  protowire.Type // what the field must be encoded as
	sub   *protoPlan     // kindMessage
	elem  *fieldPlan     // kindPointer, kindSlice; kindMap: the value
	key   *fieldPlan     // kindMap
	// objectMeta is an ObjectMeta, whose managedFields a stripping
	// decoder skips.
	objectMeta bool
}

var (
	unmarshalerType = reflect.TypeFor[unmarshaler]()
	objectMetaType  = reflect.TypeFor[metav1.ObjectMeta]()
	typeMetaType    = reflect.TypeFor[metav1.TypeMeta]()
)

// planProjection checks that t is a projection (a pointer to a struct
// with an ObjectMeta, not the source type itself) and plans its decoding.
func planProjection(t reflect.Type, source any) (*protoPlan, error) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("restsource: a projection must be a pointer to a struct, not %s", t)
	}
	if t == reflect.TypeOf(source) {
		return nil, fmt.Errorf("restsource: %s is Options.ProjectionOf itself, not a projection of it", t)
	}
	if objectMetaOf(reflect.New(t.Elem()).Interface()) == nil {
		return nil, fmt.Errorf("restsource: the projection %s has no ObjectMeta", t)
	}
	if err := matchProjection(t.Elem(), reflect.TypeOf(source).Elem()); err != nil {
		return nil, fmt.Errorf("restsource: %s is not a projection of %T: %w", t, source, err)
	}
	plan, err := planProto(t.Elem())
	if err != nil {
		return nil, fmt.Errorf("restsource: projection %s: %w", t, err)
	}
	return plan, nil
}

// jsonName is a struct field's JSON name ("" for an inlined field).
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" && !f.Anonymous {
		return f.Name
	}
	return name
}

// protoNumber is the field number in a struct field's protobuf tag.
func protoNumber(f reflect.StructField) string {
	parts := strings.Split(f.Tag.Get("protobuf"), ",")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// matchProjection checks that every field of the struct p is a field of
// the struct src: same JSON name, same protobuf number, and a type that
// decodes the same (the same type, or the same kind of leaf, or a
// projection of it in turn).
func matchProjection(p, src reflect.Type) error {
	byName := map[string]reflect.StructField{}
	for i := range src.NumField() {
		if f := src.Field(i); f.IsExported() {
			byName[jsonName(f)] = f
		}
	}
	for i := range p.NumField() {
		f := p.Field(i)
		if !f.IsExported() || f.Type == typeMetaType || jsonName(f) == "-" {
			continue
		}
		sf, ok := byName[jsonName(f)]
		if !ok {
			return fmt.Errorf("%s has no field %q (the JSON name of %s.%s)", src, jsonName(f), p.Name(), f.Name)
		}
		if protoNumber(f) != protoNumber(sf) {
			return fmt.Errorf("%s.%s has the protobuf number %q, %s.%s has %q", p.Name(), f.Name, protoNumber(f), src.Name(), sf.Name, protoNumber(sf))
		}
		if err := matchType(f.Type, sf.Type); err != nil {
			return fmt.Errorf("%s.%s: %w", p.Name(), f.Name, err)
		}
	}
	return nil
}

func matchType(p, src reflect.Type) error {
	switch {
	case p == src:
		return nil
	case p.Kind() != src.Kind():
		return fmt.Errorf("%s does not decode as %s", p, src)
	}
	switch p.Kind() {
	case reflect.Struct:
		if reflect.PointerTo(p).Implements(unmarshalerType) {
			return fmt.Errorf("%s is not %s", p, src) // decoded by its own method: only the same type will do
		}
		return matchProjection(p, src)
	case reflect.Pointer, reflect.Slice:
		return matchType(p.Elem(), src.Elem())
	case reflect.Map:
		if err := matchType(p.Key(), src.Key()); err != nil {
			return err
		}
		return matchType(p.Elem(), src.Elem())
	}
	return nil // leaves of the same kind: named string types and the like
}

// planProto returns the protobuf plan of struct type t, or an error
// naming the first field it cannot decode.
func planProto(t reflect.Type) (*protoPlan, error) {
	return planStruct(t, map[reflect.Type]*protoPlan{})
}

func planStruct(t reflect.Type, seen map[reflect.Type]*protoPlan) (*protoPlan, error) {
	if p := seen[t]; p != nil {
		return p, nil // a recursive type: the plan is being built
	}
	p := &protoPlan{}
	seen[t] = p
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type == typeMetaType {
			continue
		}
		tag, hasTag := f.Tag.Lookup("protobuf")
		if jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ","); !hasTag {
			if jsonName == "-" {
				continue
			}
			return nil, fmt.Errorf("field %s.%s has no protobuf tag", t.Name(), f.Name)
		}
		parts := strings.Split(tag, ",")
		if len(parts) < 2 {
			return nil, fmt.Errorf("field %s.%s: malformed protobuf tag %q", t.Name(), f.Name, tag)
		}
		num, err := strconv.Atoi(parts[1])
		if err != nil || num < 1 || num > int(protowire.MaxValidNumber) {
			return nil, fmt.Errorf("field %s.%s: bad protobuf field number in %q", t.Name(), f.Name, tag)
		}
		fp, err := planField(f.Type, seen)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", t.Name(), f.Name, err)
		}
		fp.index = i
		if num >= len(p.fields) {
			p.fields = append(p.fields, make([]*fieldPlan, num+1-len(p.fields))...)
		}
		if p.fields[num] != nil {
			return nil, fmt.Errorf("field %s.%s: protobuf field number %d used twice", t.Name(), f.Name, num)
		}
		p.fields[num] = fp
	}
	return p, nil
}

func planField(t reflect.Type, seen map[reflect.Type]*protoPlan) (*fieldPlan, error) {
	fp := &fieldPlan{index: -1, typ: t, wire: protowire.BytesType}
	switch {
	case reflect.PointerTo(t).Implements(unmarshalerType) && t.Kind() == reflect.Struct:
		fp.kind, fp.objectMeta = kindUnmarshaler, t == objectMetaType
		return fp, nil
	}
	switch t.Kind() {
	case reflect.String:
		fp.kind = kindString
	case reflect.Bool:
		fp.kind, fp.wire = kindBool, protowire.VarintType
	case reflect.Int32, reflect.Int64:
		fp.kind, fp.wire = kindInt, protowire.VarintType
	case reflect.Uint32, reflect.Uint64:
		fp.kind, fp.wire = kindUint, protowire.VarintType
	case reflect.Struct:
		sub, err := planStruct(t, seen)
		if err != nil {
			return nil, err
		}
		fp.kind, fp.sub = kindMessage, sub
	case reflect.Pointer:
		elem, err := planField(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		if elem.kind == kindSlice || elem.kind == kindMap || elem.kind == kindPointer || elem.kind == kindBytes {
			return nil, fmt.Errorf("unsupported type %s", t)
		}
		fp.kind, fp.elem, fp.wire = kindPointer, elem, elem.wire
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			fp.kind = kindBytes
			break
		}
		elem, err := planField(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		if elem.wire != protowire.BytesType || elem.kind == kindPointer || elem.kind == kindSlice || elem.kind == kindMap {
			// Repeated numbers may be packed; nothing here needs them.
			return nil, fmt.Errorf("unsupported type %s", t)
		}
		fp.kind, fp.elem = kindSlice, elem
	case reflect.Map:
		key, err := planField(t.Key(), seen)
		if err != nil {
			return nil, err
		}
		val, err := planField(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		if key.kind != kindString || (val.kind != kindString && val.kind != kindUnmarshaler && val.kind != kindMessage) {
			return nil, fmt.Errorf("unsupported map type %s", t)
		}
		fp.kind, fp.key, fp.elem = kindMap, key, val
	default:
		return nil, fmt.Errorf("unsupported type %s", t)
	}
	return fp, nil
}

// projector decodes protobuf messages into a projection, with a
// decoder's options.
type projector struct {
	plan     *protoPlan
	strip    bool      // skip ObjectMeta's managedFields
	interner *Interner // strings outside ObjectMeta are interned as decoded
}

var errProjectionWire = errors.New("a field of the wrong wire type")

// decode decodes msg into the struct v (addressable), merging as the
// generated decoders do.
func (pr *projector) decode(msg []byte, plan *protoPlan, v reflect.Value) error {
	// Read as the generated decoders read (wire.Gogo): a projection then
	// accepts exactly what the source type's Unmarshal accepts, in the
	// fields both decode.
	f := wire.Gogo(msg)
	for f.Next() {
		var fp *fieldPlan
		if int(f.Num) < len(plan.fields) {
			fp = plan.fields[f.Num]
		}
		if fp == nil { // not projected
			continue
		}
		if f.Type != fp.wire {
			return fmt.Errorf("field %d: %w", f.Num, errProjectionWire)
		}
		var err error
		if fp.kind == kindMap {
			err = pr.mapEntry(fp, v.Field(fp.index), f.Rest(), len(f.Bytes()))
		} else {
			err = pr.set(fp, v.Field(fp.index), f.Bytes(), f.Varint)
		}
		if err != nil {
			return err
		}
	}
	return f.Err()
}

// set decodes one value (raw for length-delimited fields, x for varints)
// into f.
func (pr *projector) set(fp *fieldPlan, f reflect.Value, raw []byte, x uint64) error {
	switch fp.kind {
	case kindString:
		if pr.interner != nil {
			f.SetString(pr.interner.Bytes(raw))
		} else {
			f.SetString(string(raw))
		}
	case kindBytes:
		f.SetBytes(append([]byte{}, raw...))
	case kindBool:
		f.SetBool(x != 0)
	case kindInt:
		if f.Kind() == reflect.Int32 {
			f.SetInt(int64(int32(x)))
		} else {
			f.SetInt(int64(x))
		}
	case kindUint:
		if f.Kind() == reflect.Uint32 {
			f.SetUint(uint64(uint32(x)))
		} else {
			f.SetUint(x)
		}
	case kindUnmarshaler:
		if fp.objectMeta && pr.strip && wire.Valid(raw) {
			om := f.Addr().Interface().(*metav1.ObjectMeta)
			return eachRun(raw, protoManagedFieldsField, om.Unmarshal, func([]byte) error { return nil })
		}
		return f.Addr().Interface().(unmarshaler).Unmarshal(raw)
	case kindMessage:
		return pr.decode(raw, fp.sub, f)
	case kindPointer:
		if f.IsNil() {
			f.Set(reflect.New(fp.typ.Elem()))
		}
		return pr.set(fp.elem, f.Elem(), raw, x)
	case kindSlice:
		f.Set(reflect.Append(f, reflect.Zero(fp.typ.Elem())))
		return pr.set(fp.elem, f.Index(f.Len()-1), raw, 0)
	case kindMap:
		return pr.mapEntry(fp, f, raw, len(raw)) // a map's value in a map: not supported by planField
	}
	return nil
}

// mapEntry decodes the map entry buf[:n] into the map f as the generated
// decoders do, quirks included ([wire.MapEntry]): a missing key or value
// is the zero value.
func (pr *projector) mapEntry(fp *fieldPlan, f reflect.Value, buf []byte, n int) error {
	if f.IsNil() {
		f.Set(reflect.MakeMap(fp.typ))
	}
	key := reflect.New(fp.key.typ).Elem()
	val := reflect.New(fp.elem.typ).Elem()
	err := wire.MapEntry(buf, n, func(num protowire.Number, raw []byte) error {
		target, plan := key, fp.key
		if num == 2 {
			target, plan = val, fp.elem
			if plan.kind != kindString {
				val = reflect.New(fp.elem.typ).Elem() // a message value is replaced, not merged
				target = val
			}
		}
		return pr.set(plan, target, raw, 0)
	})
	if err != nil {
		return err
	}
	f.SetMapIndex(key, val)
	return nil
}
