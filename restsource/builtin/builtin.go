// Package builtin is the table of Kubernetes' built-in types, each with its
// resource and a restsource constructor, for code that knows a type only
// at run time, by an example object or a resource: [restsource.New] is
// generic, so a Source needs its type at compile time. The table holds
// every type client-go's shared informer factory serves, generated from
// client-go by hack/clientgo-informers (make clientgo-gen); the client-go
// door's factory (clientgo/informers) and controller-runtime's cache
// (crcache) read it.
//
// # Usage
//
//	t, ok := builtin.ForObject(&corev1.Pod{})
//	if !ok { ... } // not a built-in type: a custom resource's
//	lw, err := t.New(restsource.Options{Client: clientset.CoreV1().RESTClient(), Resource: t.GVR.Resource})
//
// # Concurrency
//
// The table is built once, when the package is loaded, and only read
// after: every function is safe for concurrent use.
//
// # Testing
//
// The generator checks each entry against client-go's own factory
// (ForResource answers the informer of the typed accessor); make
// clientgo-check fails when the table is stale with client-go. The
// package's tests build each type's Source.
package builtin

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/restsource"
)

// Type is one built-in type.
type Type struct {
	// GVR is the type's group, version and resource.
	GVR schema.GroupVersionResource
	// Example is a zero object of the type (a *corev1.Pod, ...): read it,
	// never modify it.
	Example runtime.Object
	// Namespaced says whether the type's objects live in namespaces.
	Namespaced bool
	// New is restsource.New for the type: a Source of its objects as a
	// client-go ListerWatcher, never a typed nil.
	New func(restsource.Options) (cache.ListerWatcher, error)
}

var (
	// byType and byResource index types; filled once, by init.
	byType     = map[reflect.Type]*Type{}
	byResource = map[schema.GroupVersionResource]*Type{}
)

func init() {
	for i := range types {
		t := &types[i]
		byType[reflect.TypeOf(t.Example)] = t
		byResource[t.GVR] = t
	}
}

// ForObject returns the built-in type of example's Go type (a
// *corev1.Pod, ...), or false for any other: a custom resource's type,
// unstructured or metadata-only objects.
func ForObject(example runtime.Object) (Type, bool) {
	if t := byType[reflect.TypeOf(example)]; t != nil {
		return *t, true
	}
	return Type{}, false
}

// ForResource returns the built-in type of gvr, or false when client-go's
// factory serves no such resource.
func ForResource(gvr schema.GroupVersionResource) (Type, bool) {
	if t := byResource[gvr]; t != nil {
		return *t, true
	}
	return Type{}, false
}

// All returns every built-in type, sorted by group, version and resource;
// the slice is the caller's.
func All() []Type {
	return append([]Type(nil), types...)
}

// newSource is restsource.New[T] with the table's signature.
func newSource[T interface {
	*E
	runtime.Object
}, E any](opts restsource.Options) (cache.ListerWatcher, error) {
	src, err := restsource.New[T](opts)
	if err != nil {
		return nil, err
	}
	return src, nil
}
