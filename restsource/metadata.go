package restsource

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
	"github.com/listwatch/listwatch/restsource/internal/wire"
)

// This file is the one place that knows the layout of an object's
// metadata: where ObjectMeta sits in a T's protobuf message and JSON
// object, and how its managedFields are left out while decoding
// (Options.StripManagedFields).
//
// Every built-in type (and every type generated the same way) encodes its
// ObjectMeta as field 1, "metadata", and ObjectMeta encodes managedFields
// as its field 17, "managedFields". The result of decoding with skipping
// is, by construction and by the differential tests, the result of a full
// decode with ManagedFields set to nil afterwards.

// Protobuf field numbers of the metadata layout.
const (
	protoMetadataField      protowire.Number = 1  // metadata in every object
	protoManagedFieldsField protowire.Number = 17 // managedFields in ObjectMeta
)

// objectMetaOf returns obj's ObjectMeta, or nil if obj has none.
func objectMetaOf(obj any) *metav1.ObjectMeta {
	a, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil
	}
	om, _ := a.GetObjectMeta().(*metav1.ObjectMeta)
	return om
}

// errUnsplittable says a message could not be split into fields; the
// caller then decodes it in full, and the generated decoder reports
// whatever is wrong with it.
var errUnsplittable = errors.New("restsource: message not splittable")

// unmarshalSplit decodes msg, the protobuf message of an object whose
// ObjectMeta om belongs to u, into u as u.Unmarshal(msg) would, except
// that ObjectMeta is decoded by decodeObjectMeta: without managedFields
// if strip, with its repeating strings interned from the bytes if in is
// set. The generated decoders merge into what they decode into, so msg is
// decoded in runs of consecutive fields: runs without metadata by
// u.Unmarshal, each metadata field by decodeObjectMeta. Nothing is
// copied. If msg cannot be split into fields, the result is
// errUnsplittable and u is left partly decoded.
func unmarshalSplit(msg []byte, u unmarshaler, om *metav1.ObjectMeta, strip bool, in *interning) error {
	return eachRun(msg, protoMetadataField, u.Unmarshal, func(meta []byte) error {
		return decodeObjectMeta(meta, om, strip, in)
	})
}

// ObjectMeta's fields that decodeObjectMeta decodes itself when it
// interns: strings that repeat across objects.
const (
	metaGenerateName protowire.Number = 2
	metaNamespace    protowire.Number = 3
	metaLabels       protowire.Number = 11
	metaAnnotations  protowire.Number = 12
	metaFinalizers   protowire.Number = 14
)

// decodeObjectMeta decodes the ObjectMeta message meta into om as
// om.Unmarshal(meta) would, except that managedFields are skipped by wire
// type if strip, and that with in the namespace, generateName, labels,
// annotations and finalizers are interned straight from the bytes (a hit
// allocates nothing); the other fields go to om.Unmarshal in runs. If meta
// cannot be split into fields it returns errUnsplittable without changing
// om.
func decodeObjectMeta(meta []byte, om *metav1.ObjectMeta, strip bool, in *interning) error {
	if !wire.Valid(meta) {
		return errUnsplittable
	}
	start := 0 // of the current run
	f := wire.New(meta)
	for f.Next() {
		num := f.Num
		mine := f.Type == protowire.BytesType && (strip && num == protoManagedFieldsField ||
			in != nil && (num == metaGenerateName || num == metaNamespace || num == metaLabels || num == metaAnnotations || num == metaFinalizers))
		if !mine {
			continue
		}
		if start < f.Start() {
			if err := om.Unmarshal(meta[start:f.Start()]); err != nil {
				return err
			}
		}
		switch v := f.Bytes(); num {
		case metaGenerateName:
			om.GenerateName = in.bytes(v)
		case metaNamespace:
			om.Namespace = in.bytes(v)
		case metaFinalizers:
			om.Finalizers = append(om.Finalizers, in.bytes(v))
		case metaLabels, metaAnnotations:
			m := &om.Labels
			if num == metaAnnotations {
				m = &om.Annotations
			}
			if *m == nil {
				*m = make(map[string]string)
			}
			k, val, err := stringMapEntry(f.Rest(), len(v), in)
			if err != nil {
				return err
			}
			(*m)[k] = val
		}
		start = f.End()
	}
	if start < len(meta) {
		return om.Unmarshal(meta[start:])
	}
	return nil
}

// stringMapEntry decodes the map<string, string> entry buf[:n] as the
// generated decoders do, quirks included ([wire.MapEntry]): the last key
// and value win, a missing one is "".
func stringMapEntry(buf []byte, n int, in *interning) (key, val string, err error) {
	var k, v []byte
	err = wire.MapEntry(buf, n, func(num protowire.Number, raw []byte) error {
		if num == 1 {
			k = raw
		} else {
			v = raw
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	return in.bytes(k), in.bytes(v), nil
}

// protoLayoutOK reports whether T's protobuf encoding has the layout this
// file assumes: ObjectMeta as field 1 with managedFields as its field 17.
// It encodes a T with a name and one managedFields entry and looks.
func protoLayoutOK(obj any) bool {
	om := objectMetaOf(obj)
	m, ok := obj.(interface{ Marshal() ([]byte, error) })
	if om == nil || !ok {
		return false
	}
	om.Name = "n"
	om.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
	data, err := m.Marshal()
	if err != nil {
		return false
	}
	var name, managed bool
	err = eachRun(data, protoMetadataField, func([]byte) error { return nil }, func(meta []byte) error {
		return eachField(meta, func(num protowire.Number, v []byte) error {
			name = name || num == 1 && string(v) == "n"
			managed = managed || num == protoManagedFieldsField
			return nil
		})
	})
	return err == nil && name && managed
}

// JSON member names of the metadata layout.
const (
	jsonMetadataKey      = "metadata"
	jsonManagedFieldsKey = "managedFields"
)

// stripManagedFieldsJSON removes every "managedFields" member of every
// "metadata" member of the JSON object obj, in place, and returns the
// shortened object: the typed decoder that follows never sees them. obj
// is returned unchanged if it has none, or if it is not well-formed enough
// to be split (the typed decoder then reports the error).
func stripManagedFieldsJSON(obj []byte) []byte {
	for {
		from, to := 0, 0 // of the first managedFields member, with a comma
		_ = eachMetadata(obj, func(start, end int) error {
			if obj[start] == '{' {
				if f, t := jsonwire.MemberSpan(obj[start:end], jsonManagedFieldsKey); f != t {
					from, to = start+f, start+t
					return errFound
				}
			}
			return nil
		})
		if from == to {
			return obj
		}
		obj = obj[:from+copy(obj[from:], obj[to:])]
	}
}

// errFound stops a scan early.
var errFound = errors.New("found")

// eachMetadata calls fn with the span of the value of every "metadata"
// member of the JSON object obj, up to fn's first error; errFound stops
// it without an error.
func eachMetadata(obj []byte, fn func(start, end int) error) error {
	err := jsonwire.EachMember(obj, func(key []byte, _, valStart, valEnd int) error {
		if string(key) != jsonMetadataKey {
			return nil
		}
		if err := fn(valStart, valEnd); err != nil {
			return err
		}
		// JSON allows a key more than once (the typed decoder merges the
		// values): a later metadata member has its key spelled out or
		// escaped. If neither can be in the rest, stop here.
		if jsonwire.NoMemberNamed(obj[valEnd:], jsonMetadataKey) {
			return errFound
		}
		return nil
	})
	if err == errFound {
		return nil
	}
	return err
}
