package shard

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/listobj"
	"github.com/listwatch/listwatch/store"
)

// SourceOptions configures NewSource.
type SourceOptions struct {
	// Inner lists and watches the whole resource, e.g.
	// reflector.FromClient(clientset.CoreV1().Pods("")); required.
	Inner cache.ListerWatcherWithContext
	// Field is the hashed field; empty means FieldUID.
	Field Field
	// Name names the source in its member's handover announcements
	// (ListedAnnotation): the Sources of one resource on every replica of
	// a ring must share it, and one member's Sources must differ. Empty
	// is a name like any other, enough for one Source per member. A DNS
	// label when set.
	Name string
}

// Source is a list-and-watch source (informer.Options.Source) that yields
// only one member's objects. Each list and watch carries the member's shard
// selector, and every object and event is also checked on the client with
// the member's Matcher, so the result is the same whether or not the
// server applied the selector (ServerFiltered says which it did on the
// last list). Feed it the member's Changes (MemberOptions.OnChange: OnChange
// or Update) and attach it to its informer (Attach): a Change then relists
// from the informer's own cache, asking the server only for the slices
// gained (at the cache's resource version) and dropping the slices lost
// without a request. Lists wait for the first Change.
//
// A lost slice is handed over, not dropped: the member stops owning it at
// once (Owns), but its objects stay cached and watched until the slice's
// new owner announces that it has listed it (ListedAnnotation), so that
// every deletion is heard as a deletion by one of them; only then are they
// dropped, as moved away (informer.MovedAwayHandler, or a deletion with
// finalStateUnknown for which Owns is false). A kept slice handed back
// before that never left the cache, so its objects get no event: a handler
// that enqueues only what Owns says enqueues, on the Change, the cached
// objects of its Gained slices (Change.GainedMatcher), as with a Filter.
// See docs/sharding.md, "Handover".
type Source struct {
	// inner is the unfiltered source; never nil.
	inner cache.ListerWatcherWithContext
	// field is the hashed field, valid and never empty.
	field Field
	// name is SourceOptions.Name.
	name string
	// log is the logger of the context given to NewSource.
	log logr.Logger
	// ready is closed, with mu held, by the first Update.
	ready chan struct{}
	// cycles admits one list cycle's start at a time (capacity 1; a
	// token is held while it runs): a first page, or the opening of a
	// streaming list. The reflector may start a cycle while the request
	// of one it abandoned is still ending (it cancels its context), and
	// each start reads and writes the cycle's state (st.local, cycle,
	// listed, pages, kept).
	cycles chan struct{}

	// Owns and the watches' filters run on every event and must not wait
	// for an Update or a relist: what they read or count is atomic, kept
	// out of st. owned and deleted point to values never changed once
	// stored, and are stored with mu held.
	//
	// owned owns what the member hands out (st.handed of st.assignment);
	// nil before the first Update.
	owned atomic.Pointer[Matcher]
	// deleted are objects found deleted on the server while their slice
	// was handed over (a confirmation list): their deletion is the
	// member's to tell, so Owns says true for them. Nil when none.
	deleted atomic.Pointer[deletedSet]
	// stats counts what Stats reports.
	stats sourceCounters

	// mu guards st. A function that takes it releases it by defer (work
	// for after, such as a relist, deferred before); one named ...Locked
	// is called with it held.
	mu sync.Mutex
	st sourceState
}

// sourceState is the mutable state of a Source but for what Owns and the
// watches' filters read (Source.owned, deleted, stats); Source.mu guards
// it.
type sourceState struct {
	// relist, once set (RelistWith, Attach), is called by Update instead
	// of ending the open watches with 410 Gone.
	relist func()
	// cache reads the informer's cache (Attach); nil when not attached:
	// every relist then asks the server for the whole part.
	cache cacheView
	// template is an empty list of the resource's type, from the server's
	// first list, to build local lists in; nil before.
	template runtime.Object
	// serverFiltered: 0 unknown (no list yet), 1 the last list was
	// filtered by the server, 2 it was not.
	serverFiltered int

	// The member's latest Change, as far as the source needs it; nil
	// assignment before the first Update, never after. fingerprint is
	// assignment's Fingerprint; handed the slices the member hands out
	// (increasing); complete that nothing is withheld.
	assignment  *Assignment
	fingerprint string
	handed      []int
	complete    bool
	// kept are the slices lost but kept until their new owner has listed
	// them: increasing, none in handed, empty unless cache and ring are
	// set.
	kept []int
	// cur is the part the source serves now: handed and kept, of
	// assignment's count. Nil before the first Update, never after.
	cur *part
	// ring is the member's handover, nil for Changes not made by a
	// Member (lost slices are then dropped at once).
	ring *handover
	// announced is the fingerprint last reported listed to ring.
	announced string

	// local is set when the source asked its informer to relist (only
	// when cache is set): the next list cycle may be served from the
	// cache. Taken by that cycle's start; a failed watch (the reflector
	// then relists because it lost track) clears it.
	local bool
	// cycle is the part of the list cycle in progress, or of the last
	// one; its later pages and the watch that follows serve it. cycleRV
	// is its list's resource version, once known, until taken.
	cycle   *part
	cycleRV string
	// listed is a part whose slices the cache is known to hold in full,
	// from listedRV on: the part of the last list cycle the reflector
	// took (a streaming list's end bookmark passed, or a paginated list's
	// watch opened from its resource version), less, while a cycle is in
	// progress, the slices that cycle leaves out (the reflector may or
	// may not take it). Nil before the first.
	listed   *part
	listedRV string
	// pages is a local list served in pages (its continue token), nil
	// when none.
	pages *localPages
	// open are the watches not yet ended; Update expires them when relist
	// is not set.
	open map[*filteredWatch]struct{}

	// progress is the highest resource version the source's watches have
	// brought (events and bookmarks, those the client filter drops
	// included; one the reflector must take is counted once it took it):
	// the cache has every change of the slices it holds up to there.
	progress uint64
	// awaited is the lowest resource version, above progress, from which
	// the new owner of a kept slice covers it; 0 when nothing awaits.
	// Reaching it re-evaluates the kept slices (releaseLocked).
	awaited uint64
	// confirmer is a timer, running while kept slices wait for the watch
	// to catch up with their new owner's list; when it fires,
	// confirmDue makes the next relist confirm them with the server
	// instead (cleared by the relist that does).
	confirmer  *time.Timer
	confirmDue bool
}

// confirmAfter is how long a kept slice whose new owner has listed it
// waits for the source's watch to catch up with that list before the
// source asks the server which of its objects still exist (a quiet
// resource brings no events, and bookmarks only about once a minute).
const confirmAfter = time.Second

// SourceStats are a Source's counters since it was made.
type SourceStats struct {
	// Lists counts list responses (pages) from the server for an owning
	// member, local relists' lists of gained slices included.
	Lists int64
	// ServerFiltered counts those the server filtered (ShardInfo echoed the
	// selector); the others were filtered on the client.
	ServerFiltered int64
	// DroppedObjects counts listed objects the client filter dropped.
	DroppedObjects int64
	// DroppedEvents counts watch events the client filter dropped: with a
	// server that applies selectors, always 0.
	DroppedEvents int64
	// Reassignments counts Updates that changed what the member hands
	// out.
	Reassignments int64
	// LocalRelists counts relists served from the informer's cache (after
	// Attach): the server was asked only for gained slices, if any.
	LocalRelists int64
	// ConfirmLists counts lists of handed-over slices made to confirm
	// which of their objects still exist, when the cache had not yet
	// caught up with the new owner's list.
	ConfirmLists int64
	// HandoverDeletions counts objects of handed-over slices deleted on
	// the server before the new owner listed them: told as deletions by
	// this member.
	HandoverDeletions int64
}

// sourceCounters are the atomic counters behind SourceStats, one per
// field of the same name; they only grow.
type sourceCounters struct {
	lists, serverFiltered, droppedObjects, droppedEvents, reassignments atomic.Int64
	localRelists, confirmLists, handoverDeletions                       atomic.Int64
}

// Stats returns the source's counters.
func (s *Source) Stats() SourceStats {
	return SourceStats{Lists: s.stats.lists.Load(), ServerFiltered: s.stats.serverFiltered.Load(),
		DroppedObjects: s.stats.droppedObjects.Load(), DroppedEvents: s.stats.droppedEvents.Load(),
		Reassignments: s.stats.reassignments.Load(), LocalRelists: s.stats.localRelists.Load(),
		ConfirmLists: s.stats.confirmLists.Load(), HandoverDeletions: s.stats.handoverDeletions.Load()}
}

// part is a set of slices a source serves under one assignment.
type part struct {
	// slices are the slices, increasing; n is the assignment's count.
	slices []int
	n      int
	// selector is their shard selector; "" when there are none. coarse:
	// it selects more (it would be too long for the server otherwise),
	// so what the server sends is filtered on the client too.
	selector string
	coarse   bool
	// matcher owns them; never nil.
	matcher *Matcher
}

// partOf is the part of slices ss (increasing) of n on field.
func partOf(ss []int, n int, field Field) *part {
	p := &part{slices: ss, n: n, matcher: matcherOf(ss, n, field)}
	p.selector, p.coarse = selectorOf(ss, n, field)
	return p
}

// selectorOf is the shard selector of slices ss (increasing) of n on field,
// "" for none, coarse when it had to select more to fit the server's limit.
func selectorOf(ss []int, n int, field Field) (selector string, coarse bool) {
	rs := rangesOf(ss, n)
	if len(rs) == 0 {
		return "", false
	}
	rs, exact := fitRanges(field, rs)
	return RenderSelector(field, rs), !exact
}

// same reports whether p and q hold the same slices.
func (p *part) same(q *part) bool {
	return p != nil && q != nil && p.n == q.n && slices.Equal(p.slices, q.slices)
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
	if msgs := validation.IsDNS1123Label(opts.Name); opts.Name != "" && len(msgs) > 0 {
		return nil, fmt.Errorf("shard: SourceOptions.Name %q: %v", opts.Name, msgs)
	}
	return &Source{inner: opts.Inner, field: opts.Field.orDefault(), name: opts.Name, log: klog.FromContext(ctx),
		ready: make(chan struct{}), cycles: make(chan struct{}, 1), st: sourceState{open: map[*filteredWatch]struct{}{}}}, nil
}

// Update switches the source to c.Member's part of c.Assignment (less
// c.Withheld: c.Handed, c.Matcher) and makes the reflector relist when
// that changes what the source serves: through the informer (Attach,
// RelistWith), else by ending every open watch with 410 Gone. A Change
// that leaves the member's part as it was (other members' slices moved)
// changes nothing. Slices lost are kept, cached and watched, until their
// new owner has listed them (when c comes from a Member and the source is
// attached to its informer), then dropped by a relist from the cache.
func (s *Source) Update(c Change) {
	relist, reassigned := s.switchTo(c)
	if reassigned {
		s.stats.reassignments.Add(1)
	}
	if relist {
		s.log.V(2).Info("Shard part changed; relisting", "member", c.Member,
			"gained", len(c.Gained), "lost", len(c.Lost))
		s.requestRelist()
	}
	s.announce()
}

// switchTo is Update's change of state: it reports whether the reflector
// must relist, and whether c changed what the member hands out.
func (s *Source) switchTo(c Change) (relist, reassigned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.st
	handed, n := c.Handed(), c.Assignment.n
	s.owned.Store(matcherOf(handed, n, s.field))
	if c.ring != nil && st.ring != c.ring {
		st.ring = c.ring
		c.ring.join(s)
	}
	prev := st.cur
	if prev == nil {
		close(s.ready)
	}
	reassigned = st.assignment == nil || st.assignment.n != n || !slices.Equal(st.handed, handed)
	st.assignment, st.fingerprint, st.handed, st.complete = c.Assignment, c.Assignment.Fingerprint(), handed, len(c.Withheld) == 0
	st.kept = nil
	if prev != nil && st.listed != nil && prev.n == n && st.listed.n == n && st.cache != nil && st.ring != nil && !c.final {
		// Lost slices the cache holds: kept until handed over.
		st.kept = minus(intersect(prev.slices, st.listed.slices), handed)
	}
	st.cur = partOf(union(handed, st.kept), n, s.field)
	release := s.releaseLocked()
	// Before the first Change, lists wait for it: nothing to redo.
	return !st.cur.same(prev) && prev != nil || release, reassigned
}

// OnChange is Update, with the signature of MemberOptions.OnChange.
func (s *Source) OnChange(c Change) { s.Update(c) }

// RelistWith makes Update call relist (the informer's Relist) instead of
// ending the open watches with 410 Gone: the reflector then lists again
// at once, with no failure and no backoff, which shortens a handover by
// the reflector's backoff after a 410. Call it once the informer exists;
// a Change that comes earlier ends watches as before (there are none yet).
// Attach does this and more.
func (s *Source) RelistWith(relist func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.relist = relist
}

// Attach ties s to the informer it feeds (whose Options.Source is s): a
// Change relists through inf.Relist, and the relist is served from inf's
// cache as far as it can: the objects of slices kept are copied from it,
// those of gained slices listed from the server at the cache's resource
// version (only them), those of slices lost are left out without any
// request. It also lets s keep lost slices until their new owner has
// listed them (see Source). Call it once, before inf runs.
func Attach[T store.Object](s *Source, inf *informer.Informer[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.cache, s.st.relist = informerCache[T]{inf}, inf.Relist
}

// cacheView is what a Source reads of its informer's cache.
type cacheView interface {
	// objects returns the cached objects once the cache reflects
	// resource version rv and holds every list the reflector took before
	// the call, or ctx's error.
	objects(ctx context.Context, rv string) ([]runtime.Object, error)
}

// informerCache is the cacheView of a listwatch informer.
type informerCache[T store.Object] struct{ inf *informer.Informer[T] }

func (c informerCache[T]) objects(ctx context.Context, rv string) ([]runtime.Object, error) {
	items, err := c.inf.CachedAt(ctx, rv)
	return listobj.Objects(items), err
}

// Owns reports whether the member owns obj under the latest Change (false
// before the first), or obj was found deleted on the server while its
// slice was handed over (its deletion is this member's to tell). A
// handler's delete with finalStateUnknown for an object the member does
// not own is a move to another member, not a deletion on the server; a
// delete without finalStateUnknown is always a deletion.
func (s *Source) Owns(obj metav1.Object) bool {
	if m := s.owned.Load(); m != nil && m.Owns(obj) {
		return true
	}
	return s.deleted.Load().has(obj.GetUID())
}

// ServerFiltered reports whether the server applied the shard selector to
// the last list (its response carried ListMeta.ShardInfo with that
// selector); known is false before the first list.
func (s *Source) ServerFiltered() (filtered, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.serverFiltered == 1, s.st.serverFiltered != 0
}

// IsWatchListSemanticsUnSupported passes on the inner source's answer
// (client-go's optional interface for streaming lists).
func (s *Source) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(s.inner)
}

// wait returns once the source has a part (the first Update).
func (s *Source) wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startingCycle waits until no other list cycle is starting (see
// Source.cycles) and returns the function that lets the next one start.
func (s *Source) startingCycle(ctx context.Context) (done func(), err error) {
	select {
	case s.cycles <- struct{}{}:
		return func() { <-s.cycles }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// requestRelist makes the reflector list again under the current part:
// through the informer when it can (from its cache when attached), else by
// ending the open watches with 410 Gone.
func (s *Source) requestRelist() {
	relist, open := s.relister()
	if relist != nil {
		relist()
	}
	for w := range open {
		w.expire()
	}
}

// relister returns the relist function, the relist it asks for then
// served from the cache if attached; when there is none, it takes the
// open watches instead, to expire.
func (s *Source) relister() (func(), map[*filteredWatch]struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.relist != nil {
		s.st.local = s.st.cache != nil
		return s.st.relist, nil
	}
	open := s.st.open
	s.st.open = map[*filteredWatch]struct{}{}
	return nil, open
}

// peersChanged is called by the member when its peers' announcements
// change: a kept slice may now be released.
func (s *Source) peersChanged() { s.recheck(nil) }

// confirmNow is the confirm timer: kept slices waited long enough for the
// watch; the next relist confirms them with the server.
func (s *Source) confirmNow() {
	s.recheck(func(st *sourceState) bool {
		st.confirmer, st.confirmDue = nil, true
		return true
	})
}

// advance records that a watch brought resource version rv, and relists
// when that releases a kept slice.
func (s *Source) advance(rv string) {
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil {
		s.recheck(func(st *sourceState) bool {
			st.progress = max(st.progress, v)
			return st.awaited != 0 && v >= st.awaited
		})
	}
}

// recheck runs f (if set) with mu held and, unless it says no,
// re-evaluates the kept slices, relisting when one can be released.
func (s *Source) recheck(f func(st *sourceState) bool) {
	release := false
	defer func() {
		if release {
			s.requestRelist()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	release = (f == nil || f(&s.st)) && s.releaseLocked()
}

// releaseLocked reports whether a relist would now release a kept slice:
// its new owner has listed it, and the watch has caught up with that list
// (or the time to wait for it has run out: confirmDue). Otherwise it
// arms the wait: awaited, and the confirm timer.
func (s *Source) releaseLocked() bool {
	st := &s.st
	rel := s.releasableLocked()
	var lowest uint64
	for _, from := range rel {
		if s.caughtUpLocked(from) || st.confirmDue {
			st.awaited = 0
			return true
		}
		if v, err := strconv.ParseUint(from, 10, 64); err == nil && (lowest == 0 || v < lowest) {
			lowest = v
		}
	}
	st.awaited = lowest
	switch {
	case len(rel) == 0 && st.confirmer != nil:
		st.confirmer.Stop()
		st.confirmer = nil
	case len(rel) > 0 && st.confirmer == nil:
		st.confirmer = time.AfterFunc(confirmAfter, s.confirmNow)
	}
	return false
}

// caughtUpLocked reports whether the source's watches have brought every
// change up to resource version rv.
func (s *Source) caughtUpLocked(rv string) bool {
	v, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && s.st.progress >= v
}

// releasableLocked returns the kept slices whose current owner has
// announced that it lists them, with the resource version it covers them
// from; nil when none.
func (s *Source) releasableLocked() map[int]string {
	st := &s.st
	if len(st.kept) == 0 || st.ring == nil {
		return nil
	}
	var out map[int]string
	for _, sl := range st.kept {
		owner := st.assignment.Owner(sl)
		if owner == "" {
			continue // nobody to hand it to: keep it
		}
		if rv, ok := st.ring.coverage(owner, st.fingerprint, s.name); ok {
			if out == nil {
				out = map[int]string{}
			}
			out[sl] = rv
		}
	}
	return out
}

// announce tells the member, once, that the source has listed everything
// it owns under the latest Change, from listedRV on.
func (s *Source) announce() {
	if ring, fp, rv := s.toAnnounce(); ring != nil {
		ring.listed(s, fp, rv)
	}
}

// toAnnounce returns what announce tells, and to which handover; nil when
// nothing.
func (s *Source) toAnnounce() (ring *handover, fingerprint, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.st
	if st.ring == nil || !st.complete || st.announced == st.fingerprint || st.listed == nil ||
		len(minus(st.handed, st.listed.slices)) > 0 {
		return nil, "", ""
	}
	st.announced = st.fingerprint
	return st.ring, st.fingerprint, st.listedRV
}

// intersect returns the elements of both a and b (increasing), increasing.
func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			out = append(out, x)
		}
	}
	return out
}

// union returns the elements of a or b (both increasing), increasing.
func union(a, b []int) []int {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// rvAtLeast reports whether resource version a is at least b; false when
// either is not a number (kube-apiserver's always are).
func rvAtLeast(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x >= y
}

// laterRV reports whether a is a later resource version than b, or b is
// not one.
func laterRV(a, b string) bool {
	_, err := strconv.ParseUint(b, 10, 64)
	return err != nil || !rvAtLeast(b, a)
}

// deletedSet holds the uids of objects found deleted during a handover,
// the most recent deletedLimit (oldest first in order); never changed once
// made.
type deletedSet struct {
	set   map[types.UID]struct{}
	order []types.UID
}

// deletedLimit bounds deletedSet: notifications are delivered long before
// that many more handover deletions happen.
const deletedLimit = 4096

// with returns d (nil: empty) with uids added.
func (d *deletedSet) with(uids []types.UID) *deletedSet {
	out := &deletedSet{set: map[types.UID]struct{}{}}
	if d != nil {
		uids = append(slices.Clone(d.order), uids...)
	}
	for _, uid := range uids {
		if _, ok := out.set[uid]; !ok {
			out.set[uid] = struct{}{}
			out.order = append(out.order, uid)
		}
	}
	drop := max(0, len(out.order)-deletedLimit)
	for _, uid := range out.order[:drop] {
		delete(out.set, uid)
	}
	out.order = out.order[drop:]
	return out
}

// has reports whether d (nil: empty) holds uid.
func (d *deletedSet) has(uid types.UID) bool {
	if d == nil {
		return false
	}
	_, ok := d.set[uid]
	return ok
}
