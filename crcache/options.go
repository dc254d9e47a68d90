package crcache

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/clientgo/informers"
)

// Options configures the caches NewWithOptions builds. The zero value is
// what New uses.
type Options struct {
	// Memory are the memory options the informers of built-in types
	// decode with (restsource's options of the same names; see
	// informers.MemoryOptions). Nil means informers.DefaultMemoryOptions,
	// called once per cache: managedFields stripped while decoding, one
	// bounded Interner for the cache, the parts that repeat across objects
	// shared (ShareRepeated: cached objects are read-only, as always in
	// controller-runtime unless UnsafeDisableDeepCopy hands them out, and
	// then a reconciler must not modify them in place). To turn each
	// off, set it to false (nil for the Interner) in a MemoryOptions of
	// your own; &informers.MemoryOptions{} turns them all off.
	// StripManagedFields applies to every informer of the cache: objects
	// the cache cannot decode itself (see the package doc) are stripped by
	// a transform run before the user's.
	Memory *informers.MemoryOptions

	// Logger receives a line for each informer that lists and watches
	// through controller-runtime's own client instead of restsource, with
	// the reason: at V(1) for objects restsource does not decode (custom
	// resources' types, unstructured and metadata-only objects), at V(0)
	// when the probe failed. The zero Logger means controller-runtime's
	// log.Log, named "crcache".
	Logger logr.Logger

	// MetricsRegisterer, if set, exports every informer of the cache
	// (cache size, queue depth, handler lag, sync state: the families of
	// docs/operations.md, "Metrics", except the reflector's counters)
	// through an informer/promprovider Provider registered on it, e.g.
	// controller-runtime's metrics.Registry, which the manager's metrics
	// server serves. Each informer is named after its resource (or Go
	// type) and namespace, with "#2", "#3", ... on a name already in use;
	// an informer removed by RemoveInformer stays exported, stopped.
	MetricsRegisterer prometheus.Registerer

	// OnNewInformer, if set, is called with every informer the cache
	// builds, before controller-runtime configures it (its transform and
	// watch error handler), e.g. to check which implementation serves a
	// type.
	OnNewInformer func(example runtime.Object, inf toolscache.SharedIndexInformer)

	// StatusPage, if set, shows every informer of the cache (see
	// [StatusPage]); one page may show several caches.
	StatusPage *StatusPage

	// Types lists Go types of custom resources (registered in
	// cache.Options.Scheme) to decode with restsource through a type
	// parameter ([TypeFor]). Listing them is not needed: every type the
	// scheme knows is decoded with restsource, in JSON, with the memory
	// options (from the scheme's constructor, as [restsource.NewObjects]
	// does); so are built-in types, unstructured and metadata-only
	// objects.
	Types []Type

	// ClientDecoded lists object types (an example of each, e.g.
	// &v1.Widget{}) that the cache lists, watches and decodes through
	// controller-runtime's client, as controller-runtime's own cache does,
	// without listwatch's decoding and memory options: an escape hatch.
	// The informers still run on listwatch's engine.
	ClientDecoded []client.Object

	// Shard, if set, makes the cache a member of a ring of replicas that
	// share the objects of the types it names: each caches only its
	// slices, and a controller's handlers hear only the keys it owns. See
	// the package doc, "Sharding".
	Shard *ShardOptions

	// OnRead lists the types whose objects the cache holds whole only
	// once read, keeping every object's metadata (see [OnRead]): for
	// Secrets or ConfigMaps of which a controller reads a few.
	OnRead []OnRead

	// Live, if set, makes the namespaces of the cache's informers of
	// namespaced types changeable while the cache runs: see
	// [SetNamespaces]. Not with Shard.
	Live *LiveOptions
}
