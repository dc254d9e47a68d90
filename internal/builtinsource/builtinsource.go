// Package builtinsource lets code outside clientgo/informers build a
// restsource Source for a built-in type it knows only at run time (by an
// example object, as controller-runtime's cache does). restsource.New is
// generic: a Source needs its type at compile time. The one table of
// every built-in type with its restsource constructor is generated into
// clientgo/informers (zz_generated.builtins.go); that package hands a
// lookup over it to [Lookup] in an init function, as package store hands
// its indexer to internal/dropin.
//
// Nothing here is for users: code outside this module cannot import it.
package builtinsource

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/restsource"
)

// Type is what is known of one built-in type.
type Type struct {
	// GVR is the type's group, version and resource.
	GVR schema.GroupVersionResource
	// Namespaced says whether its objects live in namespaces.
	Namespaced bool
	// New is restsource.New for the type.
	New func(restsource.Options) (cache.ListerWatcher, error)
}

// Lookup returns the built-in type of example's Go type (a *corev1.Pod,
// ...), or false for any other (a custom resource's type, unstructured
// or metadata-only objects). Set by package clientgo/informers: a package
// using it imports that one.
var Lookup func(example runtime.Object) (Type, bool)
