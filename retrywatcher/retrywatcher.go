package retrywatcher

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/listwatch/listwatch/internal/listobj"
	"github.com/listwatch/listwatch/reflector"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Options configures a RetryWatcher made by New.
type Options struct {
	// ResourceVersion is where watching starts: a positive decimal integer,
	// as kube-apiserver issues. "" is rejected unless Lister is set, in
	// which case it means "list first".
	ResourceVersion string
	// Watcher opens watches. Required.
	Watcher cache.WatcherWithContext
	// Lister, when set, turns on relist mode: instead of stopping on 410 Gone
	// the RetryWatcher lists (RV=""), delivers the differences as synthetic
	// ADDED/MODIFIED/DELETED events and carries on watching.
	Lister cache.ListerWithContext
	// Known, in relist mode, are the objects the consumer holds at
	// ResourceVersion, so that a relist reports only real differences.
	Known []runtime.Object
	// Backoff is the retry policy between watch attempts that made no
	// progress: the n-th consecutive failure waits
	// min(Initial·Factor^(n-1), Max), scaled by a random factor in
	// [1, 1+Jitter). Any delivered event resets it, and so does a watch
	// that stayed open for at least Max. Zero fields take the
	// RetryWatcher's defaults: 500ms doubling to 30s, no jitter, no
	// ResetAfter; Slow is not used. [reflector.Backoff] says why they
	// differ from the reflector's.
	Backoff reflector.Backoff
	// Rand is the source of the backoff's jitter. Default: a PCG seeded at
	// random, as for reflector.Config.Rand (not from the clock, so that
	// watchers started at the same instant, e.g. in one synctest bubble,
	// do not jitter in step). Inject a seeded source for reproducible
	// waits. It is used from the watcher's goroutine only.
	Rand *rand.Rand
	// Clock times the waits. Nil means the real clock.
	Clock clock.WithTicker
}

// RetryWatcher is a watch.Interface that reopens its watch from the last
// resource version it delivered whenever the stream closes or fails
// transiently, so the consumer sees every event once and in order.
type RetryWatcher struct {
	result chan watch.Event
	done   chan struct{}
	cancel context.CancelFunc
	// stats are updated by the run goroutine and read by anyone.
	stats counters
	// err is why the watcher stopped; set before done closes.
	errMu sync.Mutex
	err   error
}

// New starts a RetryWatcher configured by opts. It stops when ctx ends or
// Stop is called.
func New(ctx context.Context, opts Options) (*RetryWatcher, error) {
	if opts.Watcher == nil {
		return nil, errors.New("retrywatcher: Options.Watcher is required")
	}
	m, err := NewMachine(Config{
		ResourceVersion: opts.ResourceVersion,
		Relist:          opts.Lister != nil,
		Known:           opts.Known,
		Backoff:         opts.Backoff,
		Rand:            opts.Rand,
	})
	if err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	ctx, cancel := context.WithCancel(ctx)
	rw := &RetryWatcher{result: make(chan watch.Event), done: make(chan struct{}), cancel: cancel}
	s := &shell{rw: rw, m: m, opts: opts, log: klog.FromContext(ctx).WithName("retrywatcher")}
	go s.run(ctx)
	return rw, nil
}

// ResultChan implements watch.Interface. It closes after the watcher stops.
func (rw *RetryWatcher) ResultChan() <-chan watch.Event { return rw.result }

// Stop implements watch.Interface. It may be called any number of times.
func (rw *RetryWatcher) Stop() { rw.cancel() }

// Done is closed once the watcher has stopped and ResultChan is closed.
func (rw *RetryWatcher) Done() <-chan struct{} { return rw.done }

// Err returns why the watcher stopped: nil while running or after Stop, the
// terminal error (410 Gone, 401/403, an unusable event) otherwise.
func (rw *RetryWatcher) Err() error {
	rw.errMu.Lock()
	defer rw.errMu.Unlock()
	return rw.err
}

// Stats returns a snapshot of the watcher's counters.
func (rw *RetryWatcher) Stats() Stats { return rw.stats.snapshot() }

// Stats counts what a RetryWatcher has done.
type Stats struct {
	// Watches is the number of watch calls made, successful or not.
	Watches int64
	// Lists is the number of list calls made (relist mode).
	Lists int64
	// Delivered is the number of events sent to the consumer.
	Delivered int64
	// Stale is the number of events dropped for not being newer than the
	// last one delivered.
	Stale int64
	// Malformed is the number of bookmarks ignored for a malformed resource
	// version (not a positive decimal integer). Events with one end the
	// watcher with an error instead.
	Malformed int64
	// Retries counts waits before a retry, by error class.
	Retries map[string]int64
}

type counters struct {
	watches, lists, delivered, stale, malformed atomic.Int64
	mu                                          sync.Mutex
	retries                                     map[string]int64
}

func (c *counters) retry(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retries == nil {
		c.retries = map[string]int64{}
	}
	c.retries[reason]++
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{Watches: c.watches.Load(), Lists: c.lists.Load(), Delivered: c.delivered.Load(),
		Stale: c.stale.Load(), Malformed: c.malformed.Load(), Retries: map[string]int64{}}
	for k, v := range c.retries {
		s.Retries[k] = v
	}
	return s
}

// listItems extracts the items and resource version of a list object.
func listItems(list runtime.Object) ([]runtime.Object, string, error) {
	items, rv, err := listobj.Items(list)
	if err != nil {
		return nil, "", fmt.Errorf("retrywatcher: %w", err)
	}
	return items, rv, nil
}

var _ watch.Interface = (*RetryWatcher)(nil)

var errNilWatch = errors.New("retrywatcher: the watcher returned neither a watch nor an error")
