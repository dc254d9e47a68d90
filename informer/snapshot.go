package informer

import (
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/reflector"
)

// Snapshot is a point-in-time view of one informer for status pages and
// metrics collectors: the reflector's Status, the cache size, the queue
// depth and every handler's delivery figures. It is a copy, safe to keep.
type Snapshot struct {
	// Name is the informer's Options.Name.
	Name string
	// Resource is the resource the informer was asked for through a
	// Factory (e.g. "pods", or a GVR's String()); "" otherwise.
	Resource string
	// GVR is Resource parsed as a GroupVersionResource: a GVR's String()
	// gives all three parts, a bare resource name only Resource.
	GVR schema.GroupVersionResource
	// Selection is the informer's Selection in its Factory.
	Selection Selection
	// Started reports whether Run was called.
	Started bool
	// Synced reports whether the first list has been processed (HasSynced).
	Synced bool
	// Status is the reflector's health, as Status returns it.
	Status reflector.Status
	// Objects is the number of cached objects.
	Objects int
	// Bytes estimates the memory the cached objects take, from a sample
	// of them (store.Reader.Footprint); BytesPerObject is the sample's
	// mean. Estimates, not heap measurements: strings shared between
	// objects (interned) are counted in each.
	Bytes, BytesPerObject int64
	// IndexValues maps each of the cache's indexes to its number of
	// distinct values (store.Stats).
	IndexValues map[string]int
	// Queued is the number of keys waiting in the informer's delta FIFO.
	Queued int
	// Dropped is Dropped(): objects refused by the transform or type check.
	Dropped int64
	// Handlers are the registered handlers, in registration order.
	Handlers []HandlerSnapshot
}

// HandlerSnapshot is one handler's part of a Snapshot.
type HandlerSnapshot struct {
	// Index is the handler's position in registration order among the
	// handlers registered at the time of the snapshot.
	Index int
	// Name is HandlerOptions.Name, or Index in decimal when none was given.
	Name string
	// Synced is the Registration's HasSynced.
	Synced bool
	// Stats is the Registration's Stats.
	Stats ListenerStats
}

// Snapshotter is implemented by every *Informer[T]; it lets code that does
// not know T (collectors, status pages) inspect an informer.
type Snapshotter interface {
	Snapshot() Snapshot
}

var _ Snapshotter = (*Informer[*metav1.PartialObjectMetadata])(nil)

// Snapshot returns the informer's current figures. It takes the informer's
// lock only to copy the handler list; reading Stats takes each listener's
// lock briefly. It is meant for scrapes and pages, not for hot paths.
func (inf *Informer[T]) Snapshot() Snapshot {
	inf.mu.Lock()
	handlers := append([]*Registration[T](nil), inf.handlers...)
	started := inf.started
	inf.mu.Unlock()
	st := inf.store.Reader().Stats()
	fp := inf.store.Reader().Footprint(0)
	s := Snapshot{
		Bytes:          fp.Bytes,
		BytesPerObject: fp.BytesPerObject,
		Name:           inf.name,
		Started:        started,
		Synced:         inf.HasSynced(),
		Status:         inf.Status(),
		Objects:        st.Objects,
		IndexValues:    st.IndexValues,
		Queued:         inf.fifo.Len(),
		Dropped:        inf.Dropped(),
	}
	s.Handlers = make([]HandlerSnapshot, len(handlers))
	for i, r := range handlers {
		name := r.name
		if name == "" {
			name = strconv.Itoa(i)
		}
		s.Handlers[i] = HandlerSnapshot{Index: i, Name: name, Synced: r.HasSynced(), Stats: r.Stats()}
	}
	return s
}

// Snapshots returns a Snapshot of every informer the factory has handed
// out, started or not, sorted by Name (then Resource). Resource, GVR and
// Selection are filled in from the factory's key.
func (f *Factory) Snapshots() []Snapshot {
	type entry struct {
		key factoryKey
		inf Snapshotter
	}
	f.mu.Lock()
	entries := make([]entry, 0, len(f.informers))
	for key, inf := range f.informers {
		if s, ok := inf.(Snapshotter); ok {
			entries = append(entries, entry{key, s})
		}
	}
	f.mu.Unlock()
	out := make([]Snapshot, 0, len(entries))
	for _, e := range entries {
		s := e.inf.Snapshot()
		s.Resource, s.GVR, s.Selection = e.key.resource, ParseResource(e.key.resource), e.key.sel
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// ParseResource turns a Factory resource name into a GroupVersionResource:
// the String() of a GroupVersionResource ("apps/v1, Resource=deployments")
// gives all three parts, "group/version/resource" and "version/resource"
// are split on slashes, and anything else is taken as the bare resource.
func ParseResource(resource string) schema.GroupVersionResource {
	if gv, res, ok := strings.Cut(resource, ", Resource="); ok {
		g, v, found := strings.Cut(gv, "/")
		if !found {
			return schema.GroupVersionResource{Version: g, Resource: res}
		}
		return schema.GroupVersionResource{Group: g, Version: v, Resource: res}
	}
	switch parts := strings.Split(resource, "/"); len(parts) {
	case 2:
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}
	case 3:
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
	}
	return schema.GroupVersionResource{Resource: resource}
}
