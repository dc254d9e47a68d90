package operator

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
)

// NewInformerFunc is the type of controller-runtime's cache.Options.NewInformer:
// client-go's cache.NewSharedIndexInformer signature.
type NewInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// Informers names the informer implementation a manager's cache builds
// every informer with. The zero value is Listwatch. It implements
// flag.Value, so a command can switch with -informers=client-go.
type Informers string

const (
	// Listwatch builds informers with lwcache.NewSharedIndexInformer.
	Listwatch Informers = "listwatch"
	// ClientGo builds client-go's own informers, for comparison.
	ClientGo Informers = "client-go"
)

// String implements flag.Value.
func (i *Informers) String() string {
	if i == nil || *i == "" {
		return string(Listwatch)
	}
	return string(*i)
}

// Set implements flag.Value; it accepts "listwatch" and "client-go".
func (i *Informers) Set(s string) error {
	switch Informers(s) {
	case Listwatch, ClientGo:
		*i = Informers(s)
		return nil
	}
	return fmt.Errorf("informers: %q is neither %q nor %q", s, Listwatch, ClientGo)
}

// NewInformer returns the constructor to put in cache.Options.NewInformer,
// or an error for an unknown name.
func (i Informers) NewInformer() (NewInformerFunc, error) {
	switch i {
	case Listwatch, "":
		return lwcache.NewSharedIndexInformer, nil
	case ClientGo:
		return toolscache.NewSharedIndexInformer, nil
	}
	return nil, fmt.Errorf("informers: unknown implementation %q", string(i))
}
