package reflector

import (
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/store"
)

// WatchListMode chooses between a streaming list and a paginated list.
type WatchListMode int

const (
	// WatchListAuto tries a streaming list first and falls back to a
	// paginated list for the rest of the cycle when the server rejects it.
	WatchListAuto WatchListMode = iota
	// WatchListOff always uses a paginated list.
	WatchListOff
	// WatchListForce always uses a streaming list and never falls back; its
	// errors are retried after a backoff.
	WatchListForce
)

const (
	defaultPageSize        = 500
	defaultMinWatchTimeout = 5 * time.Minute
	defaultStreamDeadline  = 2 * time.Minute
	// longWatch: a watch that the server closes after at least this long
	// (or after the timeout it asked for) is re-watched at once, whatever
	// it delivered: an apiserver restart, a load balancer or a proxy that
	// ends long requests. Such closes alone make at most six watch requests
	// a minute. A quicker close is re-watched at once too while a token
	// bucket of quickCloseBurst tokens, one earned per quickCloseEvery, has one
	// (the first in a while: a watch opened just before a restart);
	// otherwise it counts as a failed attempt, whatever the watch
	// delivered, so that a server that closes every watch at once, after a
	// bookmark or after a few events, is paced by the backoff instead of
	// being re-watched in a loop. The bucket lets at most two quick closes
	// through in any quickCloseEvery.
	longWatch       = 10 * time.Second
	quickCloseEvery = time.Minute
	quickCloseBurst = 1
	// busyCloseEvents: a watch closed quickly after delivering at least
	// this many events is most likely one kube-apiserver shed because the
	// client read it more slowly than the events came (its watch cache
	// closes a watcher whose buffer, 10 events or more, stays full): it
	// is re-watched at once from where it was, as client-go re-watches a
	// watch that delivered events, while a bucket of busyCloseBurst
	// tokens, one earned per busyCloseEvery, has one; otherwise the
	// quick-close rule above applies. Such closes alone make at most 22
	// watch requests a minute, each paid for by busyCloseEvents events: a
	// server under load may shed a watch every few seconds, and a backoff
	// that grows over such a run (to 30 s and more) leaves the cache that
	// far behind.
	busyCloseEvents = 10
	busyCloseEvery  = 5 * time.Second
	busyCloseBurst  = 10
)

// Config holds the decision parameters of the state machine. Zero values
// take the defaults stated on each field.
type Config[T store.Object] struct {
	// PageSize is the list page size. 0 means 500; negative disables paging.
	// As in client-go, a relist at a specific resource version is not paged
	// (so the watch cache serves it) unless the server paginated the first
	// RV="0" list.
	PageSize int64
	// WatchList selects streaming or paginated lists. Default WatchListAuto.
	WatchList WatchListMode
	// MinWatchTimeout and MaxWatchTimeout bound the random timeoutSeconds of
	// each watch, drawn in [Min, Max). Defaults 5m and 2×Min.
	MinWatchTimeout, MaxWatchTimeout time.Duration
	// IdleTimeout is the watchdog window: a watch that delivers neither an
	// event nor a bookmark for this long is closed and resumed from the last
	// resource version. 0 disables the watchdog.
	IdleTimeout time.Duration
	// StreamDeadline bounds how long a streaming list may take to send its
	// k8s.io/initial-events-end bookmark. Past it the stream is abandoned
	// and, unless WatchList is WatchListForce, the reflector uses paginated
	// lists for this source from then on (Status.StreamFallback): some
	// proxies and aggregated API servers drop that bookmark, and a stream
	// without it never completes. Default 2m; negative disables it (for
	// resources so large that streaming them takes longer).
	StreamDeadline time.Duration
	// Backoff configures retry delays; zero fields take the reflector's
	// defaults (see Backoff).
	Backoff Backoff
	// Rand is the source of jitter and watch timeouts. Default: a PCG seeded
	// at random. Inject a seeded source for deterministic runs. It is used
	// from one goroutine only.
	Rand *rand.Rand
	// PagedReplace hands paginated lists of more than one page, and
	// streaming lists of more than PageSize objects, to the store a page at
	// a time (ReplacePage effects, then ReplaceEnd) instead of as one
	// Replace; the store must be a PagedStore. New sets it whenever its
	// store is one, whatever the field says; it matters only to code that
	// drives a Machine itself.
	PagedReplace bool
	// KeyFunc keys objects while a streaming list is collected; list items
	// it cannot key are dropped and reported. Default store.NamespacedKey,
	// or store.MetaNamespaceKey with NamelessKeys.
	KeyFunc store.KeyFunc[T]
	// NamelessKeys keys objects without a name as client-go does
	// (store.Options.NamelessKeys): list items without a name are kept,
	// not dropped, when KeyFunc is the default.
	NamelessKeys bool
	// Metrics receives counters. Default NoopMetrics.
	Metrics Metrics
	// ExpectedGVK, when set, is the only group/version/kind accepted: other
	// objects are reported as ReasonUnexpectedType and dropped. Useful when T
	// is *unstructured.Unstructured, which every kind satisfies.
	ExpectedGVK *schema.GroupVersionKind
	// ResumeResourceVersion, when set, is where this machine takes up from
	// an earlier one over the same source and store (client-go's
	// Reflector.ListAndWatch called again): its first list asks for this
	// resource version instead of "0", as a relist would, so that the
	// store is not handed objects older than it holds; Status starts with
	// it as LastSyncResourceVersion. Pass the earlier machine's
	// Status.LastSyncResourceVersion. Default "": a first list.
	ResumeResourceVersion string
	// ResumeUnavailable is the earlier machine's
	// Status.ResourceVersionUnavailable: ResumeResourceVersion was found
	// expired or too large, so the first list is a quorum read ("").
	ResumeUnavailable bool

	// nameKey is set when KeyFunc is the default: a list item is then
	// keyable exactly when it has a name (always, with NamelessKeys),
	// checked without building the key.
	nameKey bool
}

func (c Config[T]) withDefaults() (Config[T], error) {
	switch {
	case c.PageSize == 0:
		c.PageSize = defaultPageSize
	case c.PageSize < 0:
		c.PageSize = 0
	}
	if c.WatchList < WatchListAuto || c.WatchList > WatchListForce {
		return c, fmt.Errorf("reflector: unknown WatchListMode %d", c.WatchList)
	}
	if c.MinWatchTimeout <= 0 {
		c.MinWatchTimeout = defaultMinWatchTimeout
	}
	if c.MaxWatchTimeout <= 0 {
		c.MaxWatchTimeout = 2 * c.MinWatchTimeout
	}
	if c.MaxWatchTimeout < c.MinWatchTimeout {
		return c, fmt.Errorf("reflector: MaxWatchTimeout %v < MinWatchTimeout %v", c.MaxWatchTimeout, c.MinWatchTimeout)
	}
	if c.IdleTimeout < 0 {
		return c, fmt.Errorf("reflector: negative IdleTimeout %v", c.IdleTimeout)
	}
	if c.Backoff.Factor != 0 && c.Backoff.Factor < 1 {
		return c, fmt.Errorf("reflector: Backoff.Factor %v < 1", c.Backoff.Factor)
	}
	c.Backoff = c.Backoff.withDefaults()
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	switch {
	case c.KeyFunc != nil:
	case c.NamelessKeys:
		c.KeyFunc, c.nameKey = store.MetaNamespaceKey[T], true
	default:
		c.KeyFunc, c.nameKey = store.NamespacedKey[T], true
	}
	if c.StreamDeadline == 0 {
		c.StreamDeadline = defaultStreamDeadline
	}
	if c.Metrics == nil {
		c.Metrics = NoopMetrics{}
	}
	return c, nil
}
