package ondemand

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/informer"
)

// Stats is a point-in-time account of a [Cache]: what it holds and what
// it did. A copy, safe to keep.
type Stats struct {
	// Objects is the number of objects the metadata cache holds, and
	// MetadataBytes its estimated footprint (store.Reader.Footprint).
	Objects       int   `json:"objects"`
	MetadataBytes int64 `json:"metadataBytes"`
	// Held is the number of objects held whole, Pinned those of them
	// that Options.Hold selects, HeldBytes what they take
	// (store.ObjectBytes of each, plus its entry), the figure the Budget
	// acts on.
	Held      int   `json:"held"`
	Pinned    int   `json:"pinned"`
	HeldBytes int64 `json:"heldBytes"`
	// Budget is Options.Budget (negative: none).
	Budget int64 `json:"budget"`
	// Reads counts objects read whole (Get, and each object List
	// returns), Hits those served from memory.
	Reads int64 `json:"reads"`
	Hits  int64 `json:"hits"`
	// Fetches counts single-object fetches, FetchErrors those that
	// failed, Lists the lists of whole objects, Behind the reads that
	// failed with ErrBehind.
	Fetches     int64 `json:"fetches"`
	FetchErrors int64 `json:"fetchErrors"`
	Lists       int64 `json:"lists"`
	Behind      int64 `json:"behind"`
	// Promotions counts objects that started to be held, Demotions
	// those that went back to metadata only, by reason.
	Promotions int64                  `json:"promotions"`
	Demotions  map[DemoteReason]int64 `json:"demotions,omitempty"`
}

// Bytes is everything the Cache holds: metadata and whole objects.
func (s Stats) Bytes() int64 { return s.MetadataBytes + s.HeldBytes }

// OnRead is the part of an informer.Snapshot these figures make.
func (s Stats) OnRead() *informer.OnRead {
	o := &informer.OnRead{
		Held: s.Held, Pinned: s.Pinned, HeldBytes: s.HeldBytes, Budget: s.Budget,
		Reads: s.Reads, Hits: s.Hits, Fetches: s.Fetches, FetchErrors: s.FetchErrors,
		Promotions: s.Promotions,
	}
	for _, n := range s.Demotions {
		o.Demotions += n
	}
	return o
}

// Snapshot is the metadata informer's informer.Snapshot with what the
// Cache holds whole added (Snapshot.OnRead, and its bytes in
// Snapshot.Bytes), for status pages and metrics collectors. The
// metadata informer's comes from [MetadataOf]'s, [MetadataOfInformer]'s
// of a listwatch drop-in, or a Metadata that is an informer.Snapshotter;
// without one, only those fields are set.
func (c *Cache[T]) Snapshot() informer.Snapshot {
	var snap informer.Snapshot
	switch m := c.meta.(type) {
	case interface {
		snapshot() (informer.Snapshot, bool)
	}:
		snap, _ = m.snapshot()
	case informer.Snapshotter:
		snap = m.Snapshot()
	}
	st := c.Stats()
	snap.OnRead = st.OnRead()
	snap.Bytes += st.HeldBytes
	return snap
}

// Stats reports the Cache's figures.
func (c *Cache[T]) Stats() Stats {
	fp := c.meta.Footprint()
	held, pinned, bytes := c.held.figures()
	s := Stats{
		Objects: fp.Objects, MetadataBytes: fp.Bytes,
		Held: held, Pinned: pinned, HeldBytes: bytes, Budget: c.opts.Budget,
		Reads: c.counts.reads.Load(), Hits: c.counts.hits.Load(),
		Fetches: c.counts.fetches.Load(), FetchErrors: c.counts.fetchErrors.Load(),
		Lists: c.counts.lists.Load(), Behind: c.counts.stale.Load(),
		Promotions: c.counts.promotions.Load(),
	}
	for i, r := range demoteReasons {
		if n := c.counts.demotions[i].Load(); n > 0 {
			if s.Demotions == nil {
				s.Demotions = map[DemoteReason]int64{}
			}
			s.Demotions[r] = n
		}
	}
	return s
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
