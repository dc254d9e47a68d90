package informer

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/reflector"
)

// Snapshot is a point-in-time view of one informer, the one shape of its
// state that status pages, JSON reports (it marshals as the status page's
// JSON), metrics collectors and tests read: the reflector's Status, the
// cache size, the queue depth and every handler's delivery figures. It is
// a copy, safe to keep.
type Snapshot struct {
	// Name is the informer's Options.Name.
	Name string `json:"name"`
	// Resource is the resource the informer was asked for through a
	// factory (e.g. "pods", or a GVR's String()), GVR that name parsed,
	// and Namespace, LabelSelector and FieldSelector its selection there;
	// factory.Factory.Snapshots fills them in, Informer.Snapshot leaves
	// them empty.
	Resource      string                      `json:"resource,omitempty"`
	GVR           schema.GroupVersionResource `json:"-"`
	Namespace     string                      `json:"namespace,omitempty"`
	LabelSelector string                      `json:"labelSelector,omitempty"`
	FieldSelector string                      `json:"fieldSelector,omitempty"`
	// Decoder names what decodes the informer's objects, and
	// DecoderReason why it is not listwatch's restsource, as told by the
	// code that built the informer (crcache: "restsource", or
	// "controller-runtime" with the reason); Informer.Snapshot leaves
	// them empty.
	Decoder       string `json:"decoder,omitempty"`
	DecoderReason string `json:"decoderReason,omitempty"`
	// Started reports whether Run was called.
	Started bool `json:"started"`
	// Synced reports whether the first list has been processed (HasSynced).
	Synced bool `json:"synced"`
	// Status is the reflector's health, as Status returns it.
	Status reflector.Status `json:"status"`
	// Objects is the number of cached objects.
	Objects int `json:"objects"`
	// Bytes estimates the memory the cache holds: its objects, from a
	// sample of them, its entries and its indexes (store.Reader.Footprint,
	// which counts what objects share, interned strings and label maps,
	// once), plus OnRead.HeldBytes when OnRead is set; BytesPerObject is
	// the sample's mean. Estimates, not heap measurements.
	Bytes          int64 `json:"bytes"`
	BytesPerObject int64 `json:"bytesPerObject"`
	// IndexValues maps each of the cache's indexes to its number of
	// distinct values (store.Stats).
	IndexValues map[string]int `json:"indexValues,omitempty"`
	// Queued is the number of keys waiting in the informer's delta FIFO.
	Queued int `json:"queued"`
	// Dropped is Dropped(): objects refused by the transform or type check.
	Dropped int64 `json:"dropped"`
	// Freshness is what Fresh calls learnt of how far behind the server
	// the cache is, and whether it is stale (Options.FreshnessBound).
	Freshness Freshness `json:"freshness,omitzero"`
	// OnRead is set for an informer of metadata beside which whole
	// objects are held only for those read (package ondemand, crcache's
	// Options.OnRead): what it holds whole and what it fetched.
	OnRead *OnRead `json:"onRead,omitempty"`
	// Handlers are the registered handlers, in registration order.
	Handlers []HandlerSnapshot `json:"handlers"`
}

// OnRead is the part of a [Snapshot] that an on-read cache adds to its
// metadata informer's (ondemand.Stats, in short).
type OnRead struct {
	// Held is the number of objects held whole, Pinned those held from
	// the start (a Hold selector), HeldBytes what they take, and Budget
	// the most they may take (negative: no limit).
	Held      int   `json:"held"`
	Pinned    int   `json:"pinned"`
	HeldBytes int64 `json:"heldBytes"`
	Budget    int64 `json:"budget"`
	// Reads counts objects read whole, Hits those served from memory,
	// Fetches and FetchErrors the single-object fetches and those that
	// failed, Promotions and Demotions the objects that started and
	// stopped being held.
	Reads       int64 `json:"reads"`
	Hits        int64 `json:"hits"`
	Fetches     int64 `json:"fetches"`
	FetchErrors int64 `json:"fetchErrors"`
	Promotions  int64 `json:"promotions"`
	Demotions   int64 `json:"demotions"`
}

// Healthy reports whether the informer has synced and its reflector has
// no error now; a stale informer has one (see Options.FreshnessBound).
func (s Snapshot) Healthy() bool { return s.Synced && s.Status.LastError == nil }

// HandlerSnapshot is one handler's part of a Snapshot.
type HandlerSnapshot struct {
	// Index is the handler's position in registration order among the
	// handlers registered at the time of the snapshot.
	Index int `json:"index"`
	// Name is HandlerOptions.Name, or Index in decimal when none was given.
	Name string `json:"name"`
	// Synced is the Registration's HasSynced.
	Synced bool `json:"synced"`
	// Stats is the Registration's Stats.
	Stats ListenerStats `json:"stats"`
}

// Snapshotter is implemented by every *Informer[T]; it lets code that does
// not know T (collectors, status pages, factories) inspect an informer.
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
		Freshness:      inf.Freshness(),
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
