package shard

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// SourceOptions configures NewSource.
type SourceOptions struct {
	// Inner lists and watches the whole resource, e.g.
	// reflector.FromClient(clientset.CoreV1().Pods("")); required.
	Inner cache.ListerWatcherWithContext
	// Field is the hashed field; empty means FieldUID.
	Field Field
}

// Source is a list-and-watch source (informer.Options.Source) that yields
// only one member's objects. Each list and watch carries the member's shard
// selector, and every object and event is also checked on the client with
// the member's Matcher, so the result is the same whether or not the
// server applied the selector (ServerFiltered says which it did on the
// last list). Feed it the member's Changes (Update, or OnChange as
// MemberOptions.OnChange): a change ends the open watch with 410 Gone, so
// the reflector relists under the new selector and its relist drops the
// objects of lost slices (as deletions; Owns tells them apart from real
// ones) and adds those of gained slices. Lists wait for the first Change.
//
// A stop-gap until the informer has a filter hook of its own (see
// docs/sharding.md, "Integration with the informer"): every reassignment
// costs the member a relist of its part, and lost objects look deleted.
type Source struct {
	// inner is the unfiltered source; never nil.
	inner cache.ListerWatcherWithContext
	// field is the hashed field, valid and never empty.
	field Field
	// log is the logger of the context given to NewSource.
	log logr.Logger
	// part is the member's current part, nil before the first Update.
	part atomic.Pointer[part]
	// ready is closed by the first Update.
	ready chan struct{}
	// readyOnce guards close(ready).
	readyOnce sync.Once
	// serverFiltered: 0 unknown (no list yet), 1 the last list was
	// filtered by the server, 2 it was not.
	serverFiltered atomic.Int32

	// stats counts what Stats reports.
	stats sourceCounters

	// mu guards listed and open.
	mu sync.Mutex
	// listed is the part the current list cycle started under (its first
	// page, or its streaming watch); a watch under another part must not
	// follow it.
	listed *part
	// open are the watches not yet ended; Update expires them.
	open map[*filteredWatch]struct{}

	// relist, once set (RelistWith), is called by Update instead of
	// ending the open watches with 410 Gone.
	relist atomic.Pointer[func()]
}

// SourceStats are a Source's counters since it was made.
type SourceStats struct {
	// Lists counts list responses (pages) for an owning member.
	Lists int64
	// ServerFiltered counts those the server filtered (ShardInfo echoed the
	// selector); the others were filtered on the client.
	ServerFiltered int64
	// DroppedObjects counts listed objects the client filter dropped.
	DroppedObjects int64
	// DroppedEvents counts watch events the client filter dropped: with a
	// server that applies selectors, always 0.
	DroppedEvents int64
	// Reassignments counts Updates that changed the member's part.
	Reassignments int64
}

// sourceCounters are the atomic counters behind SourceStats, one per
// field of the same name; they only grow.
type sourceCounters struct {
	lists, serverFiltered, droppedObjects, droppedEvents, reassignments atomic.Int64
}

// Stats returns the source's counters.
func (s *Source) Stats() SourceStats {
	return SourceStats{Lists: s.stats.lists.Load(), ServerFiltered: s.stats.serverFiltered.Load(),
		DroppedObjects: s.stats.droppedObjects.Load(), DroppedEvents: s.stats.droppedEvents.Load(),
		Reassignments: s.stats.reassignments.Load()}
}

// part is a member's share of the hash space under one assignment.
type part struct {
	// selector is the shard selector; "" when the member owns nothing.
	selector string
	// matcher owns the member's slices; never nil.
	matcher *Matcher
}

// NewSource wraps opts.Inner. ctx carries the logger
// (klog.FromContext); NewSource starts nothing.
func NewSource(ctx context.Context, opts SourceOptions) (*Source, error) {
	if opts.Inner == nil {
		return nil, fmt.Errorf("shard: SourceOptions.Inner is nil")
	}
	if err := opts.Field.check(); err != nil {
		return nil, err
	}
	return &Source{inner: opts.Inner, field: opts.Field.orDefault(), log: klog.FromContext(ctx),
		ready: make(chan struct{}), open: map[*filteredWatch]struct{}{}}, nil
}

// Update switches the source to c.Member's part of c.Assignment (less
// c.Withheld: c.Selector and c.Matcher) and makes
// the reflector relist: through the informer's Relist after RelistWith,
// else by ending every open watch with 410 Gone. A Change
// that leaves the member's part as it was (other members' slices moved)
// changes nothing.
func (s *Source) Update(c Change) {
	sel, _, err := c.Selector(s.field) // without c.Withheld
	if err != nil {
		panic(err) // unreachable: s.field was checked by NewSource
	}
	if cur := s.part.Load(); cur != nil && cur.selector == sel && cur.matcher.n == c.Assignment.n {
		return // the member's part is unchanged: no relist
	}
	m, _ := c.Matcher(s.field)
	s.part.Store(&part{selector: sel, matcher: m})
	s.stats.reassignments.Add(1)
	s.readyOnce.Do(func() { close(s.ready) })
	if relist := s.relist.Load(); relist != nil {
		// The reflector stops the open watches itself and lists at once;
		// until then they stay filtered under the old part.
		s.log.V(2).Info("Shard part changed; relisting", "member", c.Member,
			"gained", len(c.Gained), "lost", len(c.Lost))
		(*relist)()
		return
	}
	s.mu.Lock()
	open := s.open
	s.open = map[*filteredWatch]struct{}{}
	s.mu.Unlock()
	s.log.V(2).Info("Shard part changed; ending the watches to relist", "member", c.Member,
		"gained", len(c.Gained), "lost", len(c.Lost), "watches", len(open))
	for w := range open {
		w.expire()
	}
}

// RelistWith makes Update call relist (the informer's Relist) instead of
// ending the open watches with 410 Gone: the reflector then lists again
// at once, with no failure and no backoff, which shortens a handover by
// the reflector's backoff after a 410. Call it once the informer exists;
// a Change that comes earlier ends watches as before (there are none yet).
func (s *Source) RelistWith(relist func()) { s.relist.Store(&relist) }

// OnChange is Update, with the signature of MemberOptions.OnChange.
func (s *Source) OnChange(c Change) { s.Update(c) }

// Owns reports whether the member owns obj under the latest Change; false
// before the first. A handler's delete for an object the member no longer
// owns is a move to another member, not a deletion on the server.
func (s *Source) Owns(obj metav1.Object) bool {
	p := s.part.Load()
	return p != nil && p.matcher.Owns(obj)
}

// ServerFiltered reports whether the server applied the shard selector to
// the last list (its response carried ListMeta.ShardInfo with that
// selector); known is false before the first list.
func (s *Source) ServerFiltered() (filtered, known bool) {
	v := s.serverFiltered.Load()
	return v == 1, v != 0
}

// IsWatchListSemanticsUnSupported passes on the inner source's answer
// (client-go's optional interface for streaming lists).
func (s *Source) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(s.inner)
}

// wait returns the current part once there is one.
func (s *Source) wait(ctx context.Context) (*part, error) {
	select {
	case <-s.ready:
		return s.part.Load(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ListWithContext lists the member's objects: the first page of a cycle
// fixes the part for its later pages and for the watch that follows.
func (s *Source) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	p, err := s.wait(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if opts.Continue == "" {
		s.listed = p
	} else if s.listed != nil {
		p = s.listed
	}
	s.mu.Unlock()
	if p.selector == "" {
		// The member owns nothing: an empty list at the collection's
		// current resource version (an empty selector would list all).
		opts.Limit, opts.Continue = 1, ""
	}
	opts.ShardSelector = p.selector
	list, err := s.inner.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	if p.selector == "" {
		return list, emptyList(list)
	}
	s.stats.lists.Add(1)
	if echoed, ok := shardInfoOf(list); ok {
		if !sameSelector(echoed, p.selector) {
			// The server filtered by something else: objects we own may
			// be missing, and no client filter can bring them back.
			return nil, fmt.Errorf("shard: the server applied the shard selector %q, not the one sent, %q", echoed, p.selector)
		}
		if s.serverFiltered.Swap(1) != 1 {
			s.log.V(1).Info("The server applies shard selectors")
		}
		s.stats.serverFiltered.Add(1)
		return list, nil
	}
	if s.serverFiltered.Swap(2) != 2 {
		s.log.V(1).Info("The server ignored the shard selector (no ShardInfo in the list); filtering on the client")
	}
	dropped, err := filterList(list, p.matcher)
	s.stats.droppedObjects.Add(int64(dropped))
	return list, err
}

// sameSelector reports whether two selectors select the same hashes: equal
// strings, or the same field and ranges once parsed.
func sameSelector(a, b string) bool {
	if a == b {
		return true
	}
	fa, ra, err := ParseRanges(a)
	if err != nil {
		return false
	}
	fb, rb, err := ParseRanges(b)
	if err != nil || fa != fb {
		return false
	}
	slices.SortFunc(ra, compareRanges)
	slices.SortFunc(rb, compareRanges)
	return slices.Equal(ra, rb)
}

func compareRanges(x, y Range) int { return cmp.Compare(x.Start, y.Start) }

// WatchWithContext watches the member's objects. A watch under a part
// other than its list's fails with 410 Gone: the list is stale.
func (s *Source) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	p, err := s.wait(ctx)
	if err != nil {
		return nil, err
	}
	streaming := ptr.Deref(opts.SendInitialEvents, false)
	s.mu.Lock()
	if streaming {
		s.listed = p
	}
	stale := !streaming && s.listed != nil && s.listed != p
	s.mu.Unlock()
	if stale {
		return nil, apierrors.NewResourceExpired("the shard assignment changed since the last list")
	}
	opts.ShardSelector = p.selector
	if p.selector == "" {
		// The member owns nothing, and an empty selector would watch
		// everything: ask for the single hash 0 instead (the client
		// filter, owning nothing, drops even that).
		opts.ShardSelector = RenderSelector(s.field, []Range{{Start: 0, Last: 0}})
	}
	inner, err := s.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	w := newFilteredWatch(inner, p.matcher, s.forget, &s.stats.droppedEvents)
	s.mu.Lock()
	if s.part.Load() != p { // an Update slipped in while the watch opened
		s.mu.Unlock()
		w.expire()
		return w, nil
	}
	s.open[w] = struct{}{}
	s.mu.Unlock()
	return w, nil
}

// forget drops an ended watch from the open ones.
func (s *Source) forget(w *filteredWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, w)
}

// shardInfoOf returns the selector a list response says the server applied.
func shardInfoOf(list runtime.Object) (string, bool) {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		sel, found, _ := unstructured.NestedString(u.Object, "metadata", "shardInfo", "selector")
		return sel, found
	}
	if a, ok := list.(metav1.ListMetaAccessor); ok {
		if lm, ok := a.GetListMeta().(*metav1.ListMeta); ok && lm.ShardInfo != nil {
			return lm.ShardInfo.Selector, true
		}
	}
	return "", false
}

// filterList keeps the items of list that m owns and says how many it
// dropped.
func filterList(list runtime.Object, m *Matcher) (int, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return 0, err
	}
	kept := items[:0]
	for _, it := range items {
		if o, err := meta.Accessor(it); err != nil || m.Owns(o) {
			kept = append(kept, it) // an item without metadata is the reflector's to report
		}
	}
	dropped := len(items) - len(kept)
	if dropped == 0 {
		return 0, nil
	}
	return dropped, meta.SetList(list, kept)
}

// emptyList removes every item and the continuation from list.
func emptyList(list runtime.Object) error {
	if err := meta.SetList(list, nil); err != nil {
		return err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	la.SetContinue("")
	la.SetRemainingItemCount(nil)
	return nil
}
