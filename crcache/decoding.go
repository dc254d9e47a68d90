package crcache

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/restsource"
	"github.com/listwatch/listwatch/restsource/builtin"
)

// Type is a Go type of a custom resource that the cache decodes with
// restsource (JSON, managedFields cut from the bytes before decoding,
// metadata interned) instead of controller-runtime's client; see
// [TypeFor] and [Options.Types].
type Type struct {
	goType reflect.Type
	new    func(restsource.Options) (toolscache.ListerWatcher, error)
}

// TypeFor is the [Type] of T, a custom resource's Go type registered in
// the cache's scheme (cache.Options.Scheme), for [Options.Types]:
//
//	crcache.Options{Types: []crcache.Type{crcache.TypeFor[*v1.Widget]()}}
//
// It is not needed: a type the scheme knows and not listed is decoded the
// same way, from the scheme's type (restsource.NewObjects). Listing it
// decodes it through a type parameter instead.
func TypeFor[T interface {
	*E
	client.Object
}, E any]() Type {
	return Type{goType: reflect.TypeFor[T](), new: func(o restsource.Options) (toolscache.ListerWatcher, error) {
		o.ContentType = restsource.ContentTypeJSON // custom resources have no protobuf encoding
		return listerWatcher(restsource.New[T](o))
	}}
}

// decoding is how the cache's restsource Source decodes one object type.
type decoding struct {
	gv schema.GroupVersion
	// resource and namespaced are the type's, when known from client-go's
	// table; otherwise the resource is read from the list's path.
	resource   string
	namespaced bool
	new        func(restsource.Options) (toolscache.ListerWatcher, error)
}

// errNotDecoded says why an object type is not decoded by restsource.
var errNotDecoded = errors.New("not a type the cache's scheme knows, nor unstructured or metadata-only")

// errByClient says an object type is decoded by controller-runtime's
// client because the options say so.
var errByClient = errors.New("listed in crcache.Options.ClientDecoded")

// decodingOf returns how example's type is decoded: built-in types by
// client-go's table, metadata-only and unstructured objects by the kind
// they carry (controller-runtime sets it on the examples it builds
// informers from), custom resources' Go types listed in types or known
// to the scheme s; none of the types listed in byClient.
func decodingOf(example runtime.Object, types map[reflect.Type]Type, byClient map[reflect.Type]bool, s *runtime.Scheme) (decoding, error) {
	if byClient[reflect.TypeOf(example)] {
		return decoding{}, errByClient
	}
	switch e := example.(type) {
	case *metav1.PartialObjectMetadata:
		gvk, err := kindOf(example)
		if err != nil {
			return decoding{}, err
		}
		return decoding{gv: gvk.GroupVersion(), new: func(o restsource.Options) (toolscache.ListerWatcher, error) {
			o.GroupVersionKind = gvk // controller-runtime's metadata informers set it on their objects
			return listerWatcher(restsource.New[*metav1.PartialObjectMetadata](o))
		}}, nil
	case *unstructured.Unstructured:
		gvk, err := kindOf(e)
		if err != nil {
			return decoding{}, err
		}
		return decoding{gv: gvk.GroupVersion(), new: func(o restsource.Options) (toolscache.ListerWatcher, error) {
			o.GroupVersionKind = gvk
			return listerWatcher(restsource.New[*unstructured.Unstructured](o))
		}}, nil
	}
	if t, ok := builtin.ForObject(example); ok {
		return decoding{gv: t.GVR.GroupVersion(), resource: t.GVR.Resource, namespaced: t.Namespaced, new: t.New}, nil
	}
	if t, ok := types[reflect.TypeOf(example)]; ok {
		gvks, _, err := s.ObjectKinds(example)
		if err != nil {
			return decoding{}, fmt.Errorf("crcache.Options.Types lists %T, which the cache's scheme does not know: %w", example, err)
		}
		return decoding{gv: gvks[0].GroupVersion(), new: func(o restsource.Options) (toolscache.ListerWatcher, error) {
			o.Scheme = s
			return t.new(o)
		}}, nil
	}
	if gvks, _, err := s.ObjectKinds(example); err == nil && !gvks[0].Empty() && reflect.TypeOf(example).Kind() == reflect.Pointer &&
		reflect.TypeOf(example).Elem().Kind() == reflect.Struct {
		// Any other type the scheme knows (an operator's own custom
		// resources) is decoded the same way as a listed one, from the
		// scheme's constructor.
		gvk, elem := gvks[0], reflect.TypeOf(example).Elem()
		newObject := func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) }
		return decoding{gv: gvk.GroupVersion(), new: func(o restsource.Options) (toolscache.ListerWatcher, error) {
			o.Scheme = s
			o.ContentType = restsource.ContentTypeJSON // custom resources have no protobuf encoding
			return listerWatcher(restsource.NewObjects(o, newObject))
		}}, nil
	}
	return decoding{}, errNotDecoded
}

// kindOf returns the kind example carries.
func kindOf(example runtime.Object) (schema.GroupVersionKind, error) {
	gvk := example.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return gvk, fmt.Errorf("the %T controller-runtime builds the informer from has no kind", example)
	}
	return gvk, nil
}

// listerWatcher returns a restsource Source as a ListerWatcher (and no
// typed nil on error).
func listerWatcher[S toolscache.ListerWatcher](src S, err error) (toolscache.ListerWatcher, error) {
	if err != nil {
		return nil, err
	}
	return src, nil
}
