package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/internal/listobj"
)

// localPrefix starts the continue tokens of a local list's pages.
const localPrefix = "shard-local/"

// localWait bounds the wait for the informer's cache to reflect the
// resource version a relist starts from; past it, the relist asks the
// server for the whole part.
const localWait = 30 * time.Second

// sliceListLimit is the page size of the lists a local relist makes of
// gained slices and of slices handed over.
const sliceListLimit = 500

// errNoLocal says a relist cannot be served from the cache.
var errNoLocal = errors.New("no local relist")

// localPages is a local list being served in pages.
type localPages struct {
	// token is the continue token of the next page; served counts the
	// objects served so far.
	token  string
	served int
	// retained are cached objects still to serve (copied as served),
	// then gained the objects listed from the server.
	retained, gained []runtime.Object
	// rv is the list's resource version.
	rv string
}

// ListWithContext lists the member's objects: the first page of a cycle
// fixes the part for its later pages and for the watch that follows. A
// relist the source asked for is served from the informer's cache when
// attached (see Attach).
func (s *Source) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	if strings.HasPrefix(opts.Continue, localPrefix) {
		return s.localPage(opts, nil)
	}
	first := opts.Continue == ""
	if first {
		done, err := s.startingCycle(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
		if s.takeLocal(true) {
			list, err := s.localList(ctx, opts)
			if err == nil {
				return list, nil
			}
			if !errors.Is(err, errNoLocal) {
				s.log.V(1).Info("Relisting from the server: the cache cannot serve it", "err", err)
			}
		}
	}
	p := s.cyclePart(first)
	if p.selector == "" {
		// The member holds nothing: an empty list at the collection's
		// current resource version (an empty selector would list all).
		opts.Limit, opts.Continue = 1, ""
	}
	opts.ShardSelector = p.selector
	list, err := s.inner.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.keepTemplate(list)
	if p.selector == "" {
		if err := emptyList(list); err != nil {
			return nil, err
		}
	} else if err := s.checkList(list, p.selector, p.coarse, p.matcher); err != nil {
		return nil, err
	}
	if la, err := meta.ListAccessor(list); err == nil && first {
		s.listedAt(p, la.GetResourceVersion())
	}
	return list, nil
}

// takeLocal reports whether the list cycle starting may be served from the
// cache, which local says once. A paginated list's (list true) also ends
// the local list in pages, and needs the template to build its own in.
func (s *Source) takeLocal(list bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	local := s.st.local
	s.st.local = false
	if list {
		s.st.pages = nil
		local = local && s.st.template != nil
	}
	return local
}

// cyclePart returns the part a list from the server serves: the current
// one, starting a cycle under it, for a first page or a streaming list
// (start); the cycle's for a later page.
func (s *Source) cyclePart(start bool) *part {
	s.mu.Lock()
	defer s.mu.Unlock()
	if start {
		s.startCycleLocked(s.st.cur)
	} else if s.st.cycle == nil {
		return s.st.cur
	}
	return s.st.cycle
}

// listedAt notes rv, the resource version of the list of cycle p, unless
// another cycle started since: taken once a watch opens from it.
func (s *Source) listedAt(p *part, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.cycle == p {
		s.st.cycleRV = rv
	}
}

// startCycleLocked notes that a list cycle under p begins: until the
// reflector has taken it, the cache is known to hold only what both the
// last cycle and this one hold.
func (s *Source) startCycleLocked(p *part) {
	st := &s.st
	if st.listed != nil && !st.listed.same(p) {
		st.listed = partOf(intersect(st.listed.slices, p.slices), st.listed.n, s.field)
	}
	st.cycle, st.cycleRV = p, ""
}

// takenLocked notes that the reflector opens a plain watch from resource
// version rv: if that is the cycle's list's, the reflector took the list
// (announce after).
func (s *Source) takenLocked(rv string) bool {
	st := &s.st
	if st.cycle == nil || st.cycleRV == "" || rv != st.cycleRV {
		return false
	}
	st.listed, st.listedRV, st.cycleRV = st.cycle, st.cycleRV, ""
	return true
}

// checkList makes list hold only the objects m owns: trusted when the
// server says it applied selector (ShardInfo) and selector is exact,
// filtered here when it is coarse or the server says nothing, refused when
// the server applied another.
func (s *Source) checkList(list runtime.Object, selector string, coarse bool, m *Matcher) error {
	s.stats.lists.Add(1)
	if echoed, ok := shardInfoOf(list); ok {
		if !sameSelector(echoed, selector) {
			// The server filtered by something else: objects we own may
			// be missing, and no client filter can bring them back.
			return fmt.Errorf("shard: the server applied the shard selector %q, not the one sent, %q", echoed, selector)
		}
		if s.serverFiltered(1) {
			s.log.V(1).Info("The server applies shard selectors")
		}
		s.stats.serverFiltered.Add(1)
		if !coarse {
			return nil
		}
	} else if s.serverFiltered(2) {
		s.log.V(1).Info("The server ignored the shard selector (no ShardInfo in the list); filtering on the client")
	}
	dropped, err := filterList(list, m)
	s.stats.droppedObjects.Add(int64(dropped))
	return err
}

// serverFiltered records v as st.serverFiltered and reports whether that
// changed it.
func (s *Source) serverFiltered(v int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := s.st.serverFiltered != v
	s.st.serverFiltered = v
	return changed
}

// streamed notes that the reflector took a streaming list of p at rv
// (its end bookmark passed), and announces it.
func (s *Source) streamed(p *part, rv string) {
	defer s.announce()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.cycle == p {
		s.st.listed, s.st.listedRV, s.st.cycleRV = p, rv, ""
	}
}

// keepTemplate keeps an empty list of list's type, to build local lists
// in.
func (s *Source) keepTemplate(list runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.template != nil {
		return
	}
	s.st.template = listobj.Empty(list)
}

// localList serves the first page of a relist from the cache (compose).
func (s *Source) localList(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	retained, gained, _, err := s.compose(ctx, opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	return s.localPage(metav1.ListOptions{Limit: opts.Limit},
		&localPages{retained: retained, gained: gained, rv: opts.ResourceVersion})
}

// localPage serves the next page of the local list in progress, or the
// first of start (when set), which it begins.
func (s *Source) localPage(opts metav1.ListOptions, start *localPages) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if start != nil {
		s.st.pages = start
	}
	lp := s.st.pages
	if lp == nil || lp.token != opts.Continue {
		return nil, fmt.Errorf("shard: unknown continue token %q of a local list", opts.Continue)
	}
	n := len(lp.retained) + len(lp.gained)
	if opts.Limit > 0 && int(opts.Limit) < n {
		n = int(opts.Limit)
	}
	items := make([]runtime.Object, 0, n)
	for len(items) < n && len(lp.retained) > 0 {
		items = append(items, lp.retained[0].DeepCopyObject()) // the cache's objects stay the cache's
		lp.retained = lp.retained[1:]
	}
	for len(items) < n {
		items = append(items, lp.gained[0])
		lp.gained = lp.gained[1:]
	}
	lp.served += len(items)
	more := len(lp.retained)+len(lp.gained) > 0
	if more {
		lp.token = localPrefix + strconv.Itoa(lp.served)
	} else {
		s.st.pages = nil
	}
	list, err := listobj.Build(s.st.template, items, lp.rv)
	if err != nil {
		return nil, err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	if more {
		la.SetContinue(lp.token)
	}
	return list, nil
}

// compose prepares a relist from the cache at resource version rv: it
// releases the kept slices whose new owner has listed them (confirming
// with the server which of their objects still exist if the cache has not
// yet caught up with that list), lists the slices gained since the cache's
// last list from the server at exactly rv, and returns the cached objects
// of the slices still held (retained, not copied) and the objects of
// gained slices, under the new part. errNoLocal when the cache cannot
// serve it.
func (s *Source) compose(ctx context.Context, rv string) (retained, gained []runtime.Object, next *part, err error) {
	if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
		return nil, nil, nil, errNoLocal // nothing to place the cache at
	}
	cache, listed := s.cacheListed()
	if cache == nil || listed == nil {
		return nil, nil, nil, errNoLocal
	}
	wctx, cancel := context.WithTimeout(ctx, localWait)
	cached, err := cache.objects(wctx, rv)
	cancel()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("waiting for the cache to reach resource version %s: %w", rv, err)
	}
	released, confirm, next := s.releasing(rv)
	n := next.n
	if listed.n != n {
		return nil, nil, nil, errNoLocal
	}

	if len(confirm) > 0 {
		if err := s.confirmGone(ctx, cached, confirm, n); err != nil {
			return nil, nil, nil, err
		}
	}
	ss := minus(next.slices, listed.slices)
	if len(ss) > 0 {
		if gained, err = s.listSlices(ctx, ss, n, rv); err != nil {
			return nil, nil, nil, fmt.Errorf("listing the gained slices at resource version %s: %w", rv, err)
		}
	}
	keep := matcherOf(listed.slices, n, s.field) // what the cache holds in full
	for _, o := range cached {
		if a, err := meta.Accessor(o); err == nil && next.matcher.Owns(a) && keep.Owns(a) {
			retained = append(retained, o)
		}
	}

	if s.composed(next, released, len(confirm) > 0, rv) {
		defer s.requestRelist()
	}
	s.stats.localRelists.Add(1)
	if len(released) > 0 {
		s.log.V(2).Info("Handed slices over", "released", len(released), "confirmed", len(confirm))
	}
	return retained, gained, next, nil
}

// cacheListed returns st.cache and st.listed.
func (s *Source) cacheListed() (cacheView, *part) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.cache, s.st.listed
}

// releasing returns which kept slices a relist from the cache at rv
// releases, increasing, which of those it must confirm with the server
// (the watch did not catch up with their new owner's list), and the part
// it serves then.
func (s *Source) releasing(rv string) (released, confirm []int, next *part) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sl, from := range s.releasableLocked() {
		switch {
		case rvAtLeast(rv, from) || s.caughtUpLocked(from):
			released = append(released, sl) // every change up to the new owner's list is in the cache
		case s.st.confirmDue:
			released = append(released, sl)
			confirm = append(confirm, sl)
		}
	}
	slices.Sort(released)
	slices.Sort(confirm)
	return released, confirm, partOf(union(s.st.handed, minus(s.st.kept, released)), s.st.assignment.n, s.field)
}

// composed notes that a relist from the cache at rv under next, which
// released slices released (having confirmed them: confirmed), is served;
// it reports whether the slices still kept call for another relist.
func (s *Source) composed(next *part, released []int, confirmed bool, rv string) (again bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.st
	st.kept = minus(st.kept, released)
	if cur := partOf(union(st.handed, st.kept), st.assignment.n, s.field); !cur.same(st.cur) {
		st.cur = cur
	}
	s.startCycleLocked(next)
	st.cycleRV = rv
	if confirmed {
		st.confirmDue = false
	}
	return s.releaseLocked() // re-arms the wait for what is still kept
}

// confirmGone lists slices ss (handed over, of n) from the server as they are
// now, and marks the cached objects of those slices that no longer exist
// as deleted: their new owner listed after they were deleted, so the
// deletion is this member's to tell (Owns says true for them).
func (s *Source) confirmGone(ctx context.Context, cached []runtime.Object, ss []int, n int) error {
	s.stats.confirmLists.Add(1)
	objs, err := s.listSlices(ctx, ss, n, "")
	if err != nil {
		return fmt.Errorf("confirming the objects of the slices handed over: %w", err)
	}
	alive := make(map[types.UID]struct{}, len(objs))
	for _, o := range objs {
		if a, err := meta.Accessor(o); err == nil {
			alive[a.GetUID()] = struct{}{}
		}
	}
	m := matcherOf(ss, n, s.field)
	var gone []types.UID
	for _, o := range cached {
		a, err := meta.Accessor(o)
		if err != nil || !m.Owns(a) {
			continue
		}
		if _, ok := alive[a.GetUID()]; !ok {
			gone = append(gone, a.GetUID())
		}
	}
	if len(gone) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleted.Store(s.deleted.Load().with(gone))
	s.stats.handoverDeletions.Add(int64(len(gone)))
	return nil
}

// listSlices lists the objects of slices ss (of n) from the server: at
// exactly resource version rv, or the latest state when rv is "".
func (s *Source) listSlices(ctx context.Context, ss []int, n int, rv string) ([]runtime.Object, error) {
	sel, coarse := selectorOf(ss, n, s.field)
	m := matcherOf(ss, n, s.field)
	opts := metav1.ListOptions{ShardSelector: sel, Limit: sliceListLimit, ResourceVersion: rv}
	if rv != "" {
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	}
	var out []runtime.Object
	for {
		list, err := s.inner.ListWithContext(ctx, opts)
		if err != nil {
			return nil, err
		}
		if err := s.checkList(list, sel, coarse, m); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		la, err := meta.ListAccessor(list)
		if err != nil {
			return nil, err
		}
		if la.GetContinue() == "" {
			return out, nil
		}
		opts = metav1.ListOptions{ShardSelector: sel, Limit: sliceListLimit, Continue: la.GetContinue()}
	}
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
