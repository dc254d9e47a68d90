// Package observed lets code in this module build client-go's drop-in
// shared informer (clientgo/tools/cache) with the reflector metrics and
// processing observer of listwatch's own informers, which client-go's
// constructor signatures have no room for: crcache exports its informers'
// reflector counters this way. Package clientgo/tools/cache sets
// [NewSharedIndexInformer] in an init function, as package store hands
// its indexer to internal/dropin; a package using it imports that one.
//
// Nothing here is for users: code outside this module cannot import it.
package observed

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
)

// Observers are what a drop-in informer reports to.
type Observers struct {
	// Reflector receives the reflector's counters (reflector.Config.Metrics).
	Reflector reflector.Metrics
	// Processing is told how long each batch took (informer.Options.Processing).
	Processing informer.ProcessingObserver
}

// NewSharedIndexInformer is clientgo/tools/cache's
// NewSharedIndexInformerWithOptions reporting to o.
var NewSharedIndexInformer func(lw cache.ListerWatcher, example runtime.Object, opts cache.SharedIndexInformerOptions, o Observers) cache.SharedIndexInformer
