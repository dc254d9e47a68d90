package restsource

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// Interning JSON metadata while decoding: the metadata members that
// objectMeta interns (namespace, generateName, labels, annotations,
// finalizers) are read from the bytes straight into interned strings and
// cut out of the object before the typed decoder runs, so their strings
// are never allocated, as decodeObjectMeta does for protobuf; with
// Options.ShareRepeated the owner references are cut too, shared as the
// protobuf's are. Whenever the
// bytes are not plainly what the typed decoder would read the same way
// (two metadata members, a member twice, a null inside a map or list, a
// value of another type, a key of invalid UTF-8), nothing is cut and the typed
// decoder decodes everything, interned afterwards as before.

// jsonMeta holds the metadata members read from the bytes.
type jsonMeta struct {
	namespace, generateName string
	labels, annotations     map[string]string
	finalizers              []string
	// ownerRefs were cut (refsCut) and shared with the objects whose
	// owner references are encoded alike (Options.ShareRepeated).
	ownerRefs []metav1.OwnerReference
	refsCut   bool
	parts     bool // the object's kind's parts were cut and decoded (Options.ShareRepeated, parts.go)
}

// apply sets the members on om, which the typed decoder filled without
// them.
func (m *jsonMeta) apply(om *metav1.ObjectMeta) {
	om.Namespace, om.GenerateName = m.namespace, m.generateName
	om.Labels, om.Annotations, om.Finalizers = m.labels, m.annotations, m.finalizers
	if m.refsCut {
		om.OwnerReferences = m.ownerRefs
	}
}

// jsonMetaLayoutOK reports whether obj (a new T) encodes its ObjectMeta as
// the JSON member "metadata" with the usual member names, and decodes
// without a custom UnmarshalJSON (which could read the metadata its own
// way).
func jsonMetaLayoutOK(obj any) bool {
	om := objectMetaOf(obj)
	if _, custom := obj.(json.Unmarshaler); om == nil || custom {
		return false
	}
	om.Namespace, om.Labels = "n", map[string]string{"k": "v"}
	data, err := json.Marshal(obj)
	*om = metav1.ObjectMeta{}
	if err != nil {
		return false
	}
	found := 0
	err = eachMember(data, func(key, v []byte) error {
		if string(key) != jsonMetadataKey {
			return nil
		}
		return eachMember(v, func(key, v []byte) error {
			if string(key) == "namespace" && string(v) == `"n"` || string(key) == "labels" && string(v) == `{"k":"v"}` {
				found++
			}
			return nil
		})
	})
	return err == nil && found == 2
}

// jsonInternedString decodes the JSON string v (quotes included) into an
// interned string, as the typed decoder decodes it ([jsonwire.Unquote]).
func jsonInternedString(v []byte, in *interning) (_ string, ok bool) {
	b, _, err := jsonwire.Unquote(v)
	if err != nil {
		return "", false
	}
	return in.bytes(b), true
}

// jsonInternedMap decodes the JSON object of strings v (or null).
func jsonInternedMap(v []byte, in *interning) (_ map[string]string, ok bool) {
	if string(v) == "null" {
		return nil, true
	}
	m := map[string]string{}
	err := eachMember(v, func(key, val []byte) error {
		if s, ok := jsonInternedString(val, in); ok && utf8.Valid(key) {
			m[in.bytes(key)] = s
			return nil
		}
		return errFound
	})
	return m, err == nil
}

// Sites of the metadata's maps and owner references, shared with
// Options.ShareRepeated.
var siteJSONLabels, siteJSONAnnotations, siteJSONOwnerRefs = newSite(), newSite(), newSite()

// jsonSharedOwnerRefs decodes the JSON array of owner references v (not
// null), shared by the objects whose owner references are encoded alike,
// as the protobuf's are (objectMetaParts).
func jsonSharedOwnerRefs(v []byte, in *interning) ([]metav1.OwnerReference, bool) {
	refs, err := sharePart(&in.Interner.parts, jsonSite(siteJSONOwnerRefs), v, func(v []byte) ([]metav1.OwnerReference, error) {
		var refs []metav1.OwnerReference
		if err := kjson.UnmarshalCaseSensitivePreserveInts(v, &refs); err != nil {
			return nil, err
		}
		refs = slices.Clip(refs)
		in.ownerRefs(refs)
		return refs, nil
	})
	return refs, err == nil
}

// jsonSharedMap is jsonInternedMap, with Options.ShareRepeated shared by
// the maps encoded alike (at site).
func jsonSharedMap(v []byte, in *interning, site partSite) (map[string]string, bool) {
	if in.policy&sharesParts == 0 || string(v) == "null" {
		return jsonInternedMap(v, in)
	}
	m, err := sharePart(&in.Interner.parts, jsonSite(site), v, func(v []byte) (map[string]string, error) {
		m, ok := jsonInternedMap(v, in)
		if !ok {
			return nil, errUnsplittable
		}
		return m, nil
	})
	return m, err == nil
}

// jsonInternedList decodes the JSON array of strings v (or null).
func jsonInternedList(v []byte, in *interning) (_ []string, ok bool) {
	if string(v) == "null" {
		return nil, true
	}
	elems, err := jsonwire.AppendElements(nil, v)
	if err != nil {
		return nil, false
	}
	l := make([]string, len(elems))
	for i, e := range elems {
		if l[i], ok = jsonInternedString(e, in); !ok {
			return nil, false
		}
	}
	return l, true
}

// cutMetadataStrings reads the interned members of obj's metadata into m
// and removes them from obj, in place; it returns the shortened obj. If ok
// is false, obj is unchanged and m is to be ignored.
func cutMetadataStrings(obj []byte, in *interning) (_ []byte, m jsonMeta, ok bool) {
	metaStart, metaEnd, count := 0, 0, 0
	if eachMetadata(obj, func(start, end int) error {
		metaStart, metaEnd, count = start, end, count+1
		return nil
	}) != nil || count != 1 || obj[metaStart] != '{' {
		return obj, m, false
	}
	meta := obj[metaStart:metaEnd]
	var kept [][2]int // spans in meta of the members left to the typed decoder
	var seen [6]bool
	ok = true
	err := jsonwire.EachMember(meta, func(key []byte, keyStart, valStart, valEnd int) error {
		v := meta[valStart:valEnd]
		var which int
		var vok bool
		switch string(key) {
		case "namespace":
			which = 0
			if vok = string(v) == "null"; !vok {
				m.namespace, vok = jsonInternedString(v, in)
			}
		case "generateName":
			which = 1
			if vok = string(v) == "null"; !vok {
				m.generateName, vok = jsonInternedString(v, in)
			}
		case "labels":
			which = 2
			m.labels, vok = jsonSharedMap(v, in, siteJSONLabels)
		case "annotations":
			which = 3
			m.annotations, vok = jsonSharedMap(v, in, siteJSONAnnotations)
		case "finalizers":
			which = 4
			m.finalizers, vok = jsonInternedList(v, in)
		case "ownerReferences":
			if in.policy&sharesParts == 0 || string(v) == "null" {
				kept = append(kept, [2]int{keyStart, valEnd})
				return nil
			}
			which = 5
			m.ownerRefs, vok = jsonSharedOwnerRefs(v, in)
			m.refsCut = vok
		default:
			kept = append(kept, [2]int{keyStart, valEnd})
			return nil
		}
		if !vok || seen[which] {
			ok = false
			return errFound
		}
		seen[which] = true
		return nil
	})
	if err != nil || !ok {
		return obj, m, false
	}
	if seen == [6]bool{} {
		return obj, m, true // nothing to cut
	}
	for i := range kept { // spans in obj
		kept[i][0] += metaStart
		kept[i][1] += metaStart
	}
	return jsonwire.KeepMembers(obj, metaStart, metaEnd, kept), m, true
}
