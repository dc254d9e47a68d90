package cache

import (
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
)

// Observers are what an informer built by [NewObservedSharedIndexInformer]
// reports to: a listwatch extension, as client-go's constructors have no
// room for them. The zero value reports nothing.
type Observers struct {
	// Reflector receives the reflector's counters (reflector.Config.Metrics);
	// nil for none.
	Reflector reflector.Metrics
	// Processing is told how long each batch of notifications took
	// (informer.Options.Processing); nil for none.
	Processing informer.ProcessingObserver
}
