package reflector

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/store"
)

// Options configures New. Source and Store are required.
type Options[T store.Object] struct {
	// Config holds the machine's decision parameters (paging, streaming,
	// watch timeouts, watchdog, backoff, randomness, metrics).
	Config[T]
	// Name labels log lines. Default "reflector".
	Name string
	// Source is where objects come from; see FromListerWatcher and
	// FromClient. If it declares no streaming-list support, WatchListAuto
	// becomes WatchListOff.
	Source cache.ListerWatcherWithContext
	// Store receives the objects.
	Store Store[T]
	// Clock drives the shell's timers. Default the real clock (which
	// testing/synctest fakes).
	Clock clock.Clock
	// OnError, if set, is called from Run's goroutine with every error the
	// reflector meets — failed lists and watches, ERROR events in a stream,
	// decode errors, refused store writes — after it has been logged and
	// counted. It must not block.
	OnError func(ctx context.Context, reason Reason, err error)
}

// Reflector runs a Machine against a source and a store. Its accessors are
// safe for concurrent use while Run is running.
type Reflector[T store.Object] struct {
	name  string
	src   cache.ListerWatcherWithContext
	store Store[T]
	clock clock.Clock
	// onError is Options.OnError; may be nil.
	onError func(context.Context, Reason, error)
	// m is used only by the goroutine inside Run.
	m *Machine[T]
	// ran is set by the first Run; a Reflector runs at most once.
	ran atomic.Bool
	// relist (capacity 1) carries Relist requests to Run's loop; requests
	// made while one is pending are one request.
	relist chan struct{}

	mu sync.Mutex
	// status is the machine's status after its last step; guarded by mu.
	status Status
}

var (
	errNoSource = errors.New("reflector: Options.Source is nil")
	errNoStore  = errors.New("reflector: Options.Store is nil")
	errRan      = errors.New("reflector: Run called twice")
)

// New validates opts and returns a Reflector ready to Run.
func New[T store.Object](opts Options[T]) (*Reflector[T], error) {
	if opts.Source == nil {
		return nil, errNoSource
	}
	if opts.Store == nil {
		return nil, errNoStore
	}
	if opts.WatchList == WatchListAuto && watchlist.DoesClientNotSupportWatchListSemantics(opts.Source) {
		opts.WatchList = WatchListOff
	}
	_, opts.PagedReplace = opts.Store.(PagedStore[T])
	m, err := NewMachine(opts.Config)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "reflector"
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Reflector[T]{name: opts.Name, src: opts.Source, store: opts.Store, clock: opts.Clock, m: m, onError: opts.OnError,
		status: m.Status(), relist: make(chan struct{}, 1)}, nil
}

// Relist asks the running reflector for a new list cycle now (the machine's
// Relist input): for when what the store should hold changed on the
// caller's side, e.g. a sharded source's assignment. It does not wait, and
// is not a failure: no backoff, no error. Requests made before Run starts
// or while one is pending are served once.
func (r *Reflector[T]) Relist() {
	select {
	case r.relist <- struct{}{}:
	default:
	}
}

// Status returns the status after the machine's last step.
func (r *Reflector[T]) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// LastSyncResourceVersion is the resource version of the last list, event
// or bookmark applied to the store.
func (r *Reflector[T]) LastSyncResourceVersion() string { return r.Status().LastSyncResourceVersion }

// HasSynced reports whether a complete list has reached the store.
func (r *Reflector[T]) HasSynced() bool { return r.Status().Synced }

func (r *Reflector[T]) publish() {
	st := r.m.Status()
	r.mu.Lock()
	r.status = st
	r.mu.Unlock()
}
