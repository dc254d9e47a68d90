package fake

import (
	"fmt"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// Server is an in-memory apiserver for a fixed set of resource types. See the
// package documentation. All methods are safe for concurrent use.
type Server struct {
	// opts is the defaulted configuration; immutable.
	opts Options
	// clock is opts.Clock; immutable.
	clock clock.Clock
	// resources and byKind index the served types; immutable after NewServer
	// (the resourceState contents are guarded by mu).
	resources map[schema.GroupVersionResource]*resourceState
	byKind    map[schema.GroupVersionKind]*resourceState

	// stats counts calls and notable outcomes; atomics.
	stats counters
	// callsMu guards calls, the log of List/Watch requests (at most
	// maxCalls, oldest first). Never held with mu.
	callsMu sync.Mutex
	calls   []Call

	// mu guards everything below and the contents of every resourceState.
	// Lock order: mu before any watcher's mu.
	mu sync.Mutex
	// rv is the resource version of the latest write, shared by all types.
	rv uint64
	// compacted is the oldest RV an exact list or a continue token may use
	// (etcd's compaction). windowStart <= compacted <= rv.
	compacted uint64
	// windowStart is the oldest RV a watch may start from: every event with
	// RV > windowStart is in history. It equals compacted unless
	// Options.WatchCache is WatchCacheOwnWindow, where Compact moves only
	// compacted.
	windowStart uint64
	// history holds the events with RV > windowStart, in RV order, for all
	// resources; len(history) <= opts.HistorySize.
	history []event
	// advanced is closed (and replaced) whenever rv grows; waiters for a
	// future RV select on it.
	advanced chan struct{}
	// watchers are the open watches; a watcher removes itself when it ends.
	watchers map[*watcher]struct{}
	// namespaces are the namespaces made by CreateNamespace and not yet
	// gone after DeleteNamespace. Consulted by Create only with
	// Options.RequireNamespaces.
	namespaces map[string]struct{}
	// terminating are the namespaces DeleteNamespace could not empty yet
	// (finalizers hold objects): creates there are refused, and the last
	// object's removal removes the namespace.
	terminating map[string]struct{}
	// uidSeq numbers generated UIDs and names; only grows.
	uidSeq uint64
	// faults holds the injected faults.
	faults faultState
}

// event is one committed write.
type event struct {
	// rv is the write's resource version.
	rv uint64
	// typ is Added, Modified or Deleted.
	typ watch.EventType
	// res is the written resource type.
	res *resourceState
	// key is the written object's key.
	key string
	// obj is the new state; for Deleted, the last state with the deletion's
	// RV. prev is the state before (nil for Added). Both are shared,
	// immutable copies.
	obj, prev runtime.Object
}

// NewServer returns a server with no objects, at opts.InitialResourceVersion.
func NewServer(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:        opts,
		clock:       opts.Clock,
		resources:   map[schema.GroupVersionResource]*resourceState{},
		byKind:      map[schema.GroupVersionKind]*resourceState{},
		rv:          opts.InitialResourceVersion,
		compacted:   opts.InitialResourceVersion,
		windowStart: opts.InitialResourceVersion,
		advanced:    make(chan struct{}),
		watchers:    map[*watcher]struct{}{},
		terminating: map[string]struct{}{},
		namespaces:  map[string]struct{}{},
	}
	for _, cfg := range opts.Resources {
		r, err := newResourceState(cfg, opts.Scheme)
		if err != nil {
			return nil, err
		}
		if s.resources[cfg.GVR] != nil || s.byKind[r.gvk] != nil {
			return nil, fmt.Errorf("fake: resource %v or kind %v listed twice", cfg.GVR, r.gvk)
		}
		s.resources[cfg.GVR] = r
		s.byKind[r.gvk] = r
	}
	return s, nil
}

// ResourceVersion returns the server's current resource version: that of
// the latest write to any resource.
func (s *Server) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return formatRV(s.rv)
}

// CompactedResourceVersion returns the oldest resource version a watch, an
// exact list or a continue token may still use.
func (s *Server) CompactedResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return formatRV(s.compacted)
}

// Compact forgets history up to and including resourceVersion (capped at the
// current RV), like an etcd compaction: later exact lists and continue tokens
// for an older RV get 410 Expired, and so do watches, unless Options.WatchCache
// is WatchCacheOwnWindow (the watch cache keeps replaying its own window).
// Open watches are not affected. Compacting to an RV already compacted is a
// no-op.
func (s *Server) Compact(resourceVersion string) error {
	rv, err := parseRV(resourceVersion)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rv = min(rv, s.rv)
	if s.opts.WatchCache == WatchCacheOwnWindow {
		s.compacted = max(s.compacted, rv)
		return nil
	}
	s.trimLocked(rv)
	return nil
}

// trimLocked drops the events up to and including rv from history: neither
// a watch nor an exact list can start before it any more.
func (s *Server) trimLocked(rv uint64) {
	if rv <= s.windowStart {
		return
	}
	i := 0
	for i < len(s.history) && s.history[i].rv <= rv {
		s.history[i] = event{}
		i++
	}
	s.history = s.history[i:]
	s.windowStart = rv
	s.compacted = max(s.compacted, rv)
}

// commitLocked appends a write at the next RV, trims the history window,
// wakes RV waiters and fans the event out to the watchers.
func (s *Server) commitLocked(ev event) {
	s.history = append(s.history, ev)
	s.rv = ev.rv
	if over := len(s.history) - s.opts.HistorySize; over > 0 {
		s.trimLocked(s.history[over-1].rv)
	}
	close(s.advanced)
	s.advanced = make(chan struct{})
	for w := range s.watchers {
		w.offerLocked(ev)
	}
	s.stats.events.Add(1)
}

// resource returns the served resource for gvr, or a 404.
func (s *Server) resource(gvr schema.GroupVersionResource) (*resourceState, error) {
	if r := s.resources[gvr]; r != nil {
		return r, nil
	}
	return nil, errNoResource(gvr)
}

func formatRV(rv uint64) string { return strconv.FormatUint(rv, 10) }

// parseRV parses a resource version as kube-apiserver does (with
// strconv.ParseUint, so that its error reads the same: "resourceVersion:
// Invalid value: ..."; internal/resourceversion is the client's reading).
func parseRV(s string) (uint64, error) {
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, field.Invalid(field.NewPath("resourceVersion"), s, err.Error())
	}
	return rv, nil
}

// Resources returns the resource types the server serves, in the order of
// Options.Resources (defaulted): what a REST front end such as
// fake/fakeapi routes and lists in discovery.
func (s *Server) Resources() []Resource {
	out := make([]Resource, len(s.opts.Resources))
	copy(out, s.opts.Resources)
	return out
}

// Scheme returns the scheme the server builds typed objects with
// (Options.Scheme, defaulted to client-go's).
func (s *Server) Scheme() *runtime.Scheme { return s.opts.Scheme }
