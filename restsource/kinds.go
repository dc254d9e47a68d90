package restsource

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
)

// This file is the one place that knows the two object types whose kind
// is not their Go type's:
//
//   - metav1.PartialObjectMetadata: a Source of it lists and watches any
//     resource (Options.Resource, a custom resource's too) asking the
//     server for its objects' metadata only, as client-go's metadata
//     client does (the Accept header's "as=" parameters); the server
//     answers in protobuf for every resource, custom ones included.
//   - unstructured.Unstructured: a Source of it lists and watches the
//     resource of Options.GroupVersionKind in JSON (custom resources have
//     no protobuf encoding), as client-go's dynamic client does; each
//     object's apiVersion and kind are kept (list items that carry none
//     get the list's), and the Interner also dedups the keys and the
//     repeating string values of its maps. Without a Kind in
//     Options.GroupVersionKind any kind of its group version is taken,
//     as the dynamic client takes it (anyKind).

// typeMetaOf returns the TypeMeta every object a Source of example's type
// decodes gets, or nil to leave it empty: a metadata-only Source with
// Options.GroupVersionKind set gives its objects that kind, as
// controller-runtime's metadata informers do.
func typeMetaOf(opts Options, example runtime.Object) *metav1.TypeMeta {
	if _, ok := example.(*metav1.PartialObjectMetadata); !ok || opts.GroupVersionKind.Kind == "" {
		return nil
	}
	v, k := opts.GroupVersionKind.ToAPIVersionAndKind()
	return &metav1.TypeMeta{APIVersion: v, Kind: k}
}

// setTypeMeta gives obj the TypeMeta of typeMetaOf.
func setTypeMeta(obj any, tm *metav1.TypeMeta) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.TypeMeta = *tm
	}
}

// metadataKind is the kind of the objects of a metadata-only Source.
var metadataKind = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata")

// kindOf returns the kind of the objects a Source of example's type
// decodes.
func kindOf(opts Options, example runtime.Object) (schema.GroupVersionKind, error) {
	switch example.(type) {
	case *metav1.PartialObjectMetadata:
		return metadataKind, nil
	case *unstructured.Unstructured:
		if opts.GroupVersionKind.Version == "" {
			return schema.GroupVersionKind{}, errors.New("restsource: a Source of unstructured.Unstructured needs Options.GroupVersionKind (its version at least)")
		}
		return opts.GroupVersionKind, nil
	}
	gvks, _, err := opts.Scheme.ObjectKinds(example)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("restsource: the scheme does not know %T: %w", example, err)
	}
	return gvks[0], nil
}

// acceptHeaders returns the Accept headers of a Source's lists and
// watches.
func acceptHeaders(opts Options, example runtime.Object) (list, watch string) {
	switch example.(type) {
	case *metav1.PartialObjectMetadata:
		as := func(kind string) string {
			p := ";as=" + kind + ";g=" + metav1.GroupName + ";v=v1"
			return ContentTypeProtobuf + p + ", " + ContentTypeJSON + p + ", " + ContentTypeJSON
		}
		return as("PartialObjectMetadataList"), as("PartialObjectMetadata")
	case *unstructured.Unstructured:
		return ContentTypeJSON, ContentTypeJSON
	}
	if opts.ContentType == ContentTypeProtobuf {
		a := ContentTypeProtobuf + ", " + ContentTypeJSON
		return a, a
	}
	return ContentTypeJSON, ContentTypeJSON
}

// anyKind says whether a Source of example's type takes objects of any
// kind of Options.GroupVersionKind's group version: unstructured objects
// whose kind was not given (the dynamic client knows only the resource).
// List items without a kind then get the list's kind without its "List"
// suffix (setItemKinds), as the dynamic client's UnstructuredList gives
// them.
func anyKind(opts Options, example runtime.Object) bool {
	_, ok := example.(*unstructured.Unstructured)
	return ok && opts.GroupVersionKind.Kind == ""
}

// typedKind says whether a Source of example's type decodes as
// client-go's typed clients do, into a Go type of the scheme: neither
// metadata-only nor unstructured.
func typedKind(example runtime.Object) bool {
	switch example.(type) {
	case *metav1.PartialObjectMetadata, *unstructured.Unstructured:
		return false
	}
	return true
}

// listTypeMeta returns the kind and apiVersion of a list whose body says
// kind and apiVersion, filling in what client-go's clients fill in: a
// typed client decodes into the list it expects, so a missing kind or
// apiVersion is the Source's (a test server's "{}" is an empty list); the
// dynamic client takes a list with a kind and no apiVersion. The metadata
// and dynamic clients refuse a list without a kind, and so does a Source
// of theirs (the caller reports the kind missing).
func (d *objectDecoder[T]) listTypeMeta(kind, apiVersion []byte) ([]byte, []byte) {
	switch {
	case d.typed && len(kind) == 0:
		kind = []byte(d.listKind)
	case !d.keepKind && !d.typed || len(kind) == 0:
		return kind, apiVersion
	}
	if len(apiVersion) == 0 {
		apiVersion = []byte(d.apiVersion)
	}
	return kind, apiVersion
}

// listKindOK says whether a list of kind and apiVersion is a list of the
// Source's objects. A metadata-only Source takes a list of any kind (a
// server that cannot give PartialObjectMetadataList answers with the
// objects; each item's metadata is all that is read of it), as client-go's
// metadata client does. A typed Source refuses a list of another kind,
// which client-go's typed clients take as an empty list (an informer
// would drop every object it holds), and an unstructured one a list of
// another group version, which the dynamic client takes. A Status is no
// list.
func (d *objectDecoder[T]) listKindOK(kind, apiVersion []byte) bool {
	switch {
	case string(kind) == "Status":
		return false
	case !d.typed && !d.keepKind:
		return len(kind) > 0 && len(apiVersion) > 0
	case string(apiVersion) != d.apiVersion:
		return false
	case d.anyKind:
		return len(kind) > len("List") && strings.HasSuffix(string(kind), "List")
	}
	return string(kind) == d.listKind
}

// setItemKinds gives the items of a list of kind listKind that carry no
// kind the list's, without "List" (anyKind decoders only).
func (d *objectDecoder[T]) setItemKinds(items []runtime.RawExtension, listKind []byte) {
	if !d.anyKind {
		return
	}
	gvk := d.gvk.GroupVersion().WithKind(strings.TrimSuffix(string(listKind), "List"))
	for _, it := range items {
		if ok := it.Object.GetObjectKind(); ok.GroupVersionKind().Kind == "" {
			ok.SetGroupVersionKind(gvk)
		}
	}
}

// keepsKind says whether decoded objects of example's type keep their
// apiVersion and kind (unstructured objects: they are the objects' only
// record of them) instead of having an empty TypeMeta like the
// clientset's.
func keepsKind(example runtime.Object) bool {
	_, ok := example.(*unstructured.Unstructured)
	return ok
}

// stripUnstructured removes the managedFields of an unstructured object
// (those the byte-level cut left, e.g. of an escaped key).
func stripUnstructured(obj any) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
}

// uniqueMetadata are the metadata members whose values are unique to an
// object: interning them would only churn the Interner's table.
var uniqueMetadata = map[string]bool{
	"name": true, "uid": true, "resourceVersion": true, "creationTimestamp": true,
	"deletionTimestamp": true, "generation": true, "selfLink": true,
}

// unstructuredObject interns the keys of every map of an unstructured
// object and its string values, but the metadata's unique ones.
func (in *interning) unstructuredObject(obj map[string]any) {
	for k, v := range obj {
		if k == "metadata" {
			if m, ok := v.(map[string]any); ok {
				for mk, mv := range m {
					if s, ok := mv.(string); ok && uniqueMetadata[mk] {
						m[in.String(mk)] = s
						continue
					}
					m[in.String(mk)] = in.unstructuredValue(mv)
				}
				obj[in.String(k)] = m
				continue
			}
		}
		obj[in.String(k)] = in.unstructuredValue(v)
	}
}

// unstructuredValue interns the strings of one value of an unstructured
// object.
func (in *interning) unstructuredValue(v any) any {
	switch x := v.(type) {
	case string:
		return in.String(x)
	case map[string]any:
		for k, e := range x {
			x[in.String(k)] = in.unstructuredValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = in.unstructuredValue(e)
		}
	}
	return v
}

// unmarshalJSON decodes one JSON object into obj as the typed decoder
// does (json_typed.go; interning into in as unmarshalInterned does); an
// unstructured object is decoded into its map directly (its own
// UnmarshalJSON refuses objects without a kind, such as the items of a
// built-in type's list).
func unmarshalJSON(raw []byte, obj runtime.Object, in *interning) (walked bool, _ error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object = nil
		return false, kjson.UnmarshalCaseSensitivePreserveInts(raw, &u.Object)
	}
	return unmarshalInterned(raw, obj, in)
}
