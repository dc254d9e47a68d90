package restsource

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// unmarshaler is the generated protobuf decoding method of every built-in
// Kubernetes type (and of types generated the same way).
type unmarshaler interface {
	Unmarshal(data []byte) error
}

// objectDecoder decodes one object of type T, or a metav1.Status, from
// the bytes of one encoded object (protobuf: the "k8s\x00" magic and a
// runtime.Unknown envelope; JSON: one JSON object), as client-go's
// clientset decoder does: the result has an empty TypeMeta.
type objectDecoder[T runtime.Object] struct {
	newObj     func() T                // a new, empty object
	goType     reflect.Type            // newObj's objects' type
	gvk        schema.GroupVersionKind // of T
	apiVersion string                  // gvk's apiVersion, as encoded
	listKind   string                  // the kind of T's list
	fast       bool                    // T has a generated Unmarshal method
	codec      runtime.Decoder         // decodes types without Unmarshal (protobuf)

	strip      bool             // Options.StripManagedFields
	split      bool             // strip or intern, fast, and T has the layout metadata.go assumes
	jsonSplit  bool             // intern, and T has the JSON layout json_meta.go assumes
	interner   *Interner        // Options.Interner
	policy     passPolicy       // of every interning pass (intern_objects.go)
	shareParts bool             // Options.ShareRepeated (and T has the metadata layout)
	kind       *kindParts       // with shareParts, how T is decoded in parts, whole (nil: its metadata only)
	proj       *projector       // Options.ProjectionOf: T's protobuf decoder
	keepKind   bool             // objects keep their apiVersion and kind (unstructured, kinds.go)
	anyKind    bool             // objects of any kind of gvk's group version (kinds.go)
	typed      bool             // neither metadata-only nor unstructured: lists default their kind (kinds.go)
	typeMeta   *metav1.TypeMeta // if set, every object's TypeMeta (metadata-only, kinds.go)
}

// newTypedDecoder returns the objectDecoder of T, a pointer to E.
func newTypedDecoder[T interface {
	*E
	runtime.Object
}, E any](opts Options) (*objectDecoder[T], error) {
	return newObjectDecoder(opts, func() T { return T(new(E)) })
}

// newObjectDecoder returns the objectDecoder of the objects newObj makes
// (all of one Go type, a pointer to a struct).
func newObjectDecoder[T runtime.Object](opts Options, newObj func() T) (*objectDecoder[T], error) {
	var source runtime.Object = newObj()
	if opts.ProjectionOf != nil {
		source = opts.ProjectionOf
	}
	gvk, err := kindOf(opts, source)
	if err != nil {
		return nil, err
	}
	d := &objectDecoder[T]{newObj: newObj, goType: reflect.TypeOf(newObj()), gvk: gvk, apiVersion: gvk.GroupVersion().String(), listKind: gvk.Kind + "List",
		keepKind: keepsKind(newObj()), anyKind: anyKind(opts, newObj()), typed: typedKind(newObj()), typeMeta: typeMetaOf(opts, newObj())}
	_, d.fast = any(d.newObj()).(unmarshaler)
	if opts.ProjectionOf != nil {
		plan, err := planProjection(d.goType, opts.ProjectionOf)
		if err != nil {
			return nil, err
		}
		d.proj = &projector{plan: plan, strip: opts.StripManagedFields, interner: opts.Interner}
		d.fast = true
	}
	if !d.fast {
		d.codec = serializer.NewCodecFactory(opts.Scheme).UniversalDeserializer()
	}
	d.interner = opts.Interner
	if opts.ShareResourceLists || opts.ShareRepeated {
		d.policy |= sharesLists
	}
	if !d.fast { // no generated decoder: decoded from JSON, where the walk costs little
		d.policy |= walksAny
	}
	if opts.ShareResourceLists && d.interner == nil {
		return nil, errors.New("restsource: Options.ShareResourceLists needs Options.Interner")
	}
	if opts.ShareRepeated && d.interner == nil {
		return nil, errors.New("restsource: Options.ShareRepeated needs Options.Interner")
	}
	d.shareParts = opts.ShareRepeated && opts.ProjectionOf == nil
	if opts.StripManagedFields {
		if objectMetaOf(d.newObj()) == nil && !d.keepKind {
			return nil, fmt.Errorf("restsource: Options.StripManagedFields needs an ObjectMeta, and %T has none", d.newObj())
		}
		d.strip = true
	}
	d.split = d.fast && d.proj == nil && (d.strip || d.interner != nil) && protoLayoutOK(d.newObj())
	d.jsonSplit = d.interner != nil && jsonMetaLayoutOK(d.newObj())
	d.shareParts = d.shareParts && d.split && d.jsonSplit
	if d.shareParts {
		d.kind, d.policy = partKinds[d.goType], d.policy|sharesParts
	}
	return d, nil
}

// statusAPIVersion is the apiVersion kube-apiserver gives a metav1.Status
// in any group.
const statusAPIVersion = "v1"

// protobuf decodes raw (magic, Unknown envelope, message). status says the
// object must be a metav1.Status (an ERROR event).
func (d *objectDecoder[T]) protobuf(raw []byte, status bool) (runtime.Object, error) {
	u, err := parseUnknown(raw)
	if err != nil {
		return nil, err
	}
	if status {
		if string(u.kind) != "Status" || string(u.apiVersion) != statusAPIVersion {
			return nil, fmt.Errorf("an ERROR event carries %s, not a %s Status", u.describe(), statusAPIVersion)
		}
		st := &metav1.Status{}
		if err := st.Unmarshal(u.raw); err != nil {
			return nil, fmt.Errorf("decoding a Status: %w", err)
		}
		return st, nil
	}
	if string(u.kind) != d.gvk.Kind || string(u.apiVersion) != d.apiVersion {
		return nil, fmt.Errorf("expected %s %s, got %s", d.apiVersion, d.gvk.Kind, u.describe())
	}
	return d.message(u.raw, raw)
}

// message decodes the protobuf message of one T (payload); whole is the
// complete encoding (magic and envelope), for the scheme fallback.
func (d *objectDecoder[T]) message(payload, whole []byte) (T, error) {
	var zero T
	obj := d.newObj()
	if d.proj != nil {
		if err := d.proj.decode(payload, d.proj.plan, reflect.ValueOf(obj).Elem()); err != nil {
			return zero, fmt.Errorf("decoding %s: %w", d.gvk.Kind, err)
		}
		d.finish(obj, nil)
		return obj, nil
	}
	if d.fast {
		err := errUnsplittable
		var in *interning // the metadata's, interned while decoding
		if d.split {
			if d.interner != nil {
				in = newPass(d.interner, d.policy, doneMetaStrings)
			}
			if d.shareParts {
				in.decoded |= doneMetaShared
				var whole bool
				if whole, err = unmarshalParts(payload, any(obj).(unmarshaler), objectMetaOf(obj), d.strip, in, d.kind); whole {
					in.decoded = doneAll
				}
				if err != nil {
					// Whatever went wrong decoding it in parts (nothing,
					// for what servers send), the generated decoder has
					// the last word on the whole message.
					err = errUnsplittable
				}
			} else {
				err = unmarshalSplit(payload, any(obj).(unmarshaler), objectMetaOf(obj), d.strip, in)
			}
			if err == errUnsplittable {
				obj, in = d.newObj(), nil // start again from scratch
			}
		}
		if err == errUnsplittable {
			err = any(obj).(unmarshaler).Unmarshal(payload)
		}
		if err != nil {
			return zero, fmt.Errorf("decoding %s: %w", d.gvk.Kind, err)
		}
		d.finish(obj, in)
		return obj, nil
	}
	if whole == nil {
		return zero, fmt.Errorf("decoding %s: %T has no protobuf Unmarshal method", d.gvk.Kind, obj)
	}
	if _, _, err := d.codec.Decode(whole, nil, obj); err != nil {
		return zero, fmt.Errorf("decoding %s: %w", d.gvk.Kind, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	d.finish(obj, nil)
	return obj, nil
}

// finish applies the options to a decoded object: whatever decoding path
// it took, a stripped object has no managedFields, and an interned one
// shares its repeating strings. in is the interning pass that began while
// decoding, if one did.
func (d *objectDecoder[T]) finish(obj T, in *interning) {
	if d.typeMeta != nil {
		setTypeMeta(obj, d.typeMeta)
	}
	if d.strip {
		if om := objectMetaOf(obj); om != nil {
			om.ManagedFields = nil
		} else {
			stripUnstructured(obj)
		}
	}
	if d.interner == nil {
		return
	}
	if in == nil {
		in = newPass(d.interner, d.policy, 0)
	}
	in.object(obj)
	in.done()
}

// json decodes one JSON object. The kind is checked after decoding, from
// the TypeMeta the decoding filled in, which saves the separate pass that
// finds apiVersion and kind first.
func (d *objectDecoder[T]) json(raw []byte, status bool) (runtime.Object, error) {
	var obj runtime.Object
	var meta *jsonMeta
	var in *interning
	wantKind, wantVersion := d.gvk.Kind, d.apiVersion
	var err error
	if status {
		obj, wantKind, wantVersion = &metav1.Status{}, "Status", statusAPIVersion
		_, err = unmarshalJSON(raw, obj, nil)
	} else {
		o := d.newObj()
		raw, meta, in = d.prepareJSON(raw, o)
		in, err = d.decodeJSON(raw, o, in)
		obj = o
	}
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", wantKind, err)
	}
	ok := obj.GetObjectKind()
	gvk := ok.GroupVersionKind()
	if gvk.Kind == "" {
		return nil, fmt.Errorf("object 'Kind' is missing in %s", truncate(raw))
	}
	if gvk.Version == "" {
		return nil, fmt.Errorf("object 'apiVersion' is missing in %s", truncate(raw))
	}
	if (gvk.Kind != wantKind && (status || !d.anyKind)) || gvk.GroupVersion().String() != wantVersion {
		if status {
			return nil, fmt.Errorf("an ERROR event carries %s %s, not a %s Status", gvk.GroupVersion(), gvk.Kind, statusAPIVersion)
		}
		return nil, fmt.Errorf("expected %s %s, got %s %s", wantVersion, wantKind, gvk.GroupVersion(), gvk.Kind)
	}
	if status || !d.keepKind {
		ok.SetGroupVersionKind(schema.GroupVersionKind{})
	}
	if !status {
		d.finishJSON(obj.(T), meta, in)
	}
	return obj, nil
}

// prepareJSON strips managedFields from raw if the options say so and, with
// an Interner, cuts the metadata's repeating strings out of it, interned
// (json_meta.go), and with ShareRepeated the parts of a kind of partKinds,
// decoded into obj (parts.go); meta and in are then for finishJSON.
func (d *objectDecoder[T]) prepareJSON(raw []byte, obj T) (_ []byte, meta *jsonMeta, in *interning) {
	if d.strip {
		raw = stripManagedFieldsJSON(raw)
	}
	if !d.jsonSplit {
		return raw, nil, nil
	}
	in = newPass(d.interner, d.policy, doneMetaStrings)
	raw, m, ok := cutMetadataStrings(raw, in)
	if !ok {
		return raw, nil, nil // the typed decoder decodes them; finish interns
	}
	if d.kind != nil {
		pd := newPartsDecoder(in, false)
		raw, m.parts = d.kind.cut(pd, raw, obj)
		pd.release()
	}
	return raw, &m, in
}

// decodeJSON decodes raw (prepared) into obj with the typed decoder. The
// strings of a type the reflective walker would intern (one without a
// generated decoder, with an Interner) are interned as they are decoded,
// into in (made if nil), which it returns; the walk is then skipped
// unless a value was left to kjson.
func (d *objectDecoder[T]) decodeJSON(raw []byte, obj T, in *interning) (*interning, error) {
	if d.interner == nil || d.fast {
		_, err := unmarshalJSON(raw, obj, nil)
		return in, err
	}
	if in == nil {
		in = newPass(d.interner, d.policy, 0)
	}
	walked, err := unmarshalJSON(raw, obj, in)
	if walked {
		in.decoded |= doneRest
	}
	return in, err
}

// finishJSON puts the metadata strings prepareJSON cut back into obj,
// then finishes it.
func (d *objectDecoder[T]) finishJSON(obj T, meta *jsonMeta, in *interning) {
	if meta != nil {
		om := objectMetaOf(obj)
		meta.apply(om)
		if meta.parts || meta.refsCut { // the metadata's own strings are interned here, and the rest of the object with its parts
			if !meta.refsCut { // shared, interned as they were decoded
				in.ownerRefs(om.OwnerReferences)
			}
			in.managedFields(om.ManagedFields)
			if in.decoded |= doneMetaShared; meta.parts {
				in.decoded |= doneRest
			}
		}
	}
	d.finish(obj, in)
}

// jsonItem decodes one item of a JSON list: items carry no kind of their
// own, and whatever TypeMeta they do carry is kept, as client-go does.
func (d *objectDecoder[T]) jsonItem(raw []byte) (T, error) {
	var zero T
	obj := d.newObj()
	raw, meta, in := d.prepareJSON(raw, obj)
	in, err := d.decodeJSON(raw, obj, in)
	if err != nil {
		return zero, fmt.Errorf("decoding %s: %w", d.gvk.Kind, err)
	}
	if ok := obj.GetObjectKind(); d.keepKind && !d.anyKind && ok.GroupVersionKind().Kind == "" {
		ok.SetGroupVersionKind(d.gvk) // anyKind: setItemKinds, once the list's kind is known
	}
	d.finishJSON(obj, meta, in)
	return obj, nil
}

// truncate shortens data for an error message.
func truncate(data []byte) string {
	const max = 128
	if len(data) > max {
		return string(data[:max]) + "..."
	}
	return string(data)
}
