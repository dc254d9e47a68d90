package scope

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/listobj"
	"github.com/listwatch/listwatch/store"
)

// SourceOptions configures NewSource.
type SourceOptions struct {
	// Inner returns the lister-watcher of one namespace, "" for every
	// namespace, e.g. func(ns string) cache.ListerWatcherWithContext {
	// return reflector.FromClient(clientset.CoreV1().ConfigMaps(ns)) };
	// required. The source adds the scope's selectors to every call.
	Inner func(namespace string) cache.ListerWatcherWithContext
	// Scope is the scope served first; Validate must accept it.
	Scope Scope
}

// Source is a list-and-watch source (informer.Options.Source) whose
// scope (namespaces and selectors) can change while its informer runs.
// Attach it to its informer; Update then changes the scope by a relist
// that the informer's own cache serves, as shard.Source's reassignments
// are served (docs/operations.md, "Changing scope at run time"):
//
//   - a namespace gained is listed alone, at the cache's resource version
//     (one list per gained namespace, paged);
//   - a namespace lost leaves the cache with no request, its objects told
//     to handlers as deletions whose final state is known,
//     OnDelete(obj, false) (the source is an [informer.Leaver]);
//   - a selector change lists the new scope once (server side, in each of
//     its namespaces); objects unchanged are not told again, those that
//     no longer match leave as above;
//   - queues, registrations and indexes stay: it is one informer
//     throughout.
//
// Lists are made namespace by namespace (the first at the resource
// version the reflector asks for, the others at exactly the first's), so
// they need list permission only in the scope's namespaces. A scope of one
// namespace is watched in that namespace; a scope of several, or all, is
// watched with one cluster-wide watch (filtered here to the scope's
// namespaces): the reflector needs one stream in resource version order,
// which watches of separate namespaces do not give (see the docs).
type Source struct {
	// inner is SourceOptions.Inner; never nil.
	inner func(namespace string) cache.ListerWatcherWithContext
	// log is the logger of the context given to NewSource.
	log logr.Logger
	// stats counts what Stats reports.
	stats counters

	// mu guards st; never held while waiting on the server or the
	// informer.
	mu sync.Mutex
	st state
}

// state is a Source's mutable state; Source.mu guards it.
type state struct {
	// cache, queued and relist are the attached informer's CachedAt,
	// WaitForQueued and Relist; nil before Attach.
	cache  func(ctx context.Context, rv string) ([]runtime.Object, error)
	queued func(ctx context.Context) error
	relist func()
	// template is an empty list of the resource's type, from the first
	// list, to build lists in; nil before.
	template runtime.Object

	// desired is the scope last asked for (normal), gen its generation
	// (one per Update that changed it). held is the scope of the list the
	// reflector took last: what the cache holds. Every generation up to
	// settled is applied or refused; a refused one's error is in refused
	// until its Update reads it.
	desired, held Scope
	gen, settled  uint64
	refused       map[uint64]error
	lastErr       error
	// served is the last list served, until a watch from its resource
	// version shows that the reflector took it.
	served *cycle
	// listed is set by the first list served: an Update then relists.
	listed bool
	// local is set when the source asked its informer to relist: the
	// next list is served from the cache.
	local bool
	// leftScope is the scope of the last list served, leftSel its label
	// selector, left the uids it left out of the cache's objects: the
	// objects a relist deletes because they left the scope (Left).
	leftScope Scope
	leftSel   labels.Selector
	left      map[types.UID]struct{}
	// changed is closed and replaced when settled moves.
	changed chan struct{}
}

// cycle is a list the source served: of scope, for generation gen, at
// resource version rv.
type cycle struct {
	scope Scope
	gen   uint64
	rv    string
}

// Stats are a Source's counters since it was made.
type Stats struct {
	// Lists counts list requests (pages) made to the server, and
	// ListedObjects the objects they returned.
	Lists, ListedObjects int64
	// LocalRelists counts relists served from the informer's cache.
	LocalRelists int64
	// Changes counts scope changes applied, Refused those refused by the
	// server.
	Changes, Refused int64
}

type counters struct {
	lists, listedObjects, localRelists, changes, refused atomic.Int64
}

// Stats returns the source's counters.
func (s *Source) Stats() Stats {
	return Stats{Lists: s.stats.lists.Load(), ListedObjects: s.stats.listedObjects.Load(),
		LocalRelists: s.stats.localRelists.Load(), Changes: s.stats.changes.Load(), Refused: s.stats.refused.Load()}
}

// Status is what a Source serves and wants to serve.
type Status struct {
	// Scope is the scope the cache holds; Desired the one last asked for
	// (equal once applied or refused); Pending that a change is not yet
	// applied.
	Scope, Desired Scope
	Pending        bool
	// LastError is why the last refused change was refused (the server's
	// error, e.g. 403 in a namespace not allowed); nil once a later
	// change is applied.
	LastError error
}

// Status reports the source's scope.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Scope: s.st.held, Desired: s.st.desired, Pending: s.st.gen > s.st.settled, LastError: s.st.lastErr}
}

// listLimit is the page size of the source's lists.
const listLimit = 500

// localWait bounds the wait for the informer's cache to reflect the
// resource version a relist starts from; past it, the relist goes to the
// server.
const localWait = 30 * time.Second

// errNoLocal says a relist cannot be served from the cache.
var errNoLocal = errors.New("no local relist")

// NewSource makes a Source of opts.Scope. ctx carries the logger
// (klog.FromContext); NewSource starts nothing.
func NewSource(ctx context.Context, opts SourceOptions) (*Source, error) {
	if opts.Inner == nil {
		return nil, errors.New("scope: SourceOptions.Inner is nil")
	}
	if err := opts.Scope.Validate(); err != nil {
		return nil, err
	}
	sc := opts.Scope.normal()
	return &Source{inner: opts.Inner, log: klog.FromContext(ctx),
		st: state{desired: sc, held: sc, refused: map[uint64]error{}, changed: make(chan struct{})}}, nil
}

// Attach ties s to the informer it feeds (whose Options.Source is s): an
// Update relists through inf.Relist, and the relist is served from inf's
// cache (informer.CachedAt) with what the new scope gains listed from the
// server at the cache's resource version. Call it once, before inf runs.
func Attach[T store.Object](s *Source, inf *informer.Informer[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.relist, s.st.queued = inf.Relist, inf.WaitForQueued
	s.st.cache = func(ctx context.Context, rv string) ([]runtime.Object, error) {
		items, err := inf.CachedAt(ctx, rv)
		return listobj.Objects(items), err
	}
}

// Scope returns the scope the cache holds (Status().Scope).
func (s *Source) Scope() Scope { return s.Status().Scope }

// Update changes the scope to sc and returns once the cache holds it (or
// a later scope asked for meanwhile: changes arriving while one is
// applied coalesce), or the server refused it, or ctx ended. An invalid
// sc is refused at once, and the scope stays as it was. A scope whose
// lists the server refuses (403 in a namespace the user may not list, or
// any other error listing what it gains) is reported: Update returns the
// server's error, Status().LastError holds it, and the cache keeps the
// old scope whole. Before the informer's first list, Update only sets the
// scope that list serves. It needs Attach.
func (s *Source) Update(ctx context.Context, sc Scope) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	sc = sc.normal()
	s.mu.Lock()
	st := &s.st
	if !sc.Equal(st.desired) {
		if st.listed && st.relist == nil {
			s.mu.Unlock()
			return errors.New("scope: Update of a source not attached to its informer (scope.Attach)")
		}
		st.gen++
		st.desired = sc
	}
	g, listed, relist := st.gen, st.listed, st.relist
	if listed && g > st.settled {
		st.local = true
	} else {
		relist = nil
	}
	s.mu.Unlock()
	if !listed {
		return nil // the first list serves it
	}
	if relist != nil {
		s.log.V(2).Info("Scope changing; relisting", "scope", sc.String())
		relist()
	}
	return s.wait(ctx, g, sc)
}

// wait returns once generation g is settled: nil once applied (and the
// cache has applied its list), its error once refused.
func (s *Source) wait(ctx context.Context, g uint64, sc Scope) error {
	for {
		s.mu.Lock()
		err, refused := s.st.refused[g]
		delete(s.st.refused, g)
		done, ch, queued := s.st.settled >= g, s.st.changed, s.st.queued
		s.mu.Unlock()
		switch {
		case refused:
			return err
		case done:
			if queued == nil {
				return nil
			}
			return queued(ctx)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			delete(s.st.refused, g)
			s.mu.Unlock()
			return fmt.Errorf("scope: waiting for the scope %s to be applied: %w", sc, ctx.Err())
		}
	}
}

// settleLocked marks every generation up to g settled, those after the
// last settled one refused with err when err is set.
func (s *Source) settleLocked(g uint64, err error) {
	st := &s.st
	if g <= st.settled {
		return
	}
	if err != nil {
		for x := st.settled + 1; x <= g; x++ {
			st.refused[x] = err
		}
	}
	st.settled = g
	close(st.changed)
	st.changed = make(chan struct{})
}

// Owns reports whether obj is in the scope the cache holds: its
// namespace and labels match, and the last relist did not leave it out.
func (s *Source) Owns(obj metav1.Object) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, left := s.st.left[obj.GetUID()]; left {
		return false
	}
	return matches(s.st.held, nil, obj)
}

// Left implements informer.Leaver: obj, which a relist no longer has,
// left the scope (the relist's scope does not hold it, or the relist left
// it out of the cache's objects because the new selectors do not select
// it), rather than being deleted on the server.
func (s *Source) Left(obj metav1.Object) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, left := s.st.left[obj.GetUID()]; left {
		return true
	}
	return !matches(s.st.leftScope, s.st.leftSel, obj)
}

// matches reports whether obj's namespace and labels are in sc, a normal
// scope (sel is sc's parsed label selector, parsed here when nil).
func matches(sc Scope, sel labels.Selector, obj metav1.Object) bool {
	if !sc.hasNormal(obj.GetNamespace()) {
		return false
	}
	if sel == nil {
		var err error
		if sel, err = labels.Parse(sc.LabelSelector); err != nil {
			return true // Validate accepted it
		}
	}
	return sel.Matches(labels.Set(obj.GetLabels()))
}

// IsWatchListSemanticsUnSupported tells the reflector to list (client-go's
// optional interface): the source's lists are made of one list per
// namespace, which a single streaming watch cannot be.
func (s *Source) IsWatchListSemanticsUnSupported() bool { return true }

var (
	_ informer.Leaver                   = (*Source)(nil)
	_ informer.Owner                    = (*Source)(nil)
	_ informer.CurrentResourceVersioner = (*Source)(nil)
)

// CurrentResourceVersion implements informer.CurrentResourceVersioner (for
// informer.Fresh): a list of at most one object from a quorum read, in the
// first namespace of the scope (or cluster-wide for all), where the
// source may list.
func (s *Source) CurrentResourceVersion(ctx context.Context) (string, error) {
	sc := s.Scope()
	ns := ""
	if !sc.All() {
		ns = sc.Namespaces[0]
	}
	list, err := s.inner(ns).ListWithContext(ctx, metav1.ListOptions{Limit: 1, LabelSelector: sc.LabelSelector, FieldSelector: sc.FieldSelector})
	if err != nil {
		return "", err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return "", fmt.Errorf("scope: the server's answer %T is not a list: %w", list, err)
	}
	return la.GetResourceVersion(), nil
}

// ListWithContext lists the scope, whole (it never returns a continue
// token). A relist the source asked for (Update) is served from the
// informer's cache.
func (s *Source) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if opts.Continue != "" {
		return nil, fmt.Errorf("scope: continue token %q: the source serves whole lists", opts.Continue)
	}
	s.mu.Lock()
	local := s.st.local && s.st.cache != nil && s.st.template != nil
	s.st.local = false
	sc, g, held, cached := s.st.desired, s.st.gen, s.st.held, s.st.cache
	s.mu.Unlock()
	if local {
		list, err := s.localList(ctx, cached, opts.ResourceVersion, held, sc, g)
		if err == nil || ctx.Err() != nil {
			return list, err // abandoned: the reflector lists again
		}
		if !errors.Is(err, errNoLocal) {
			s.log.V(1).Info("Relisting from the server: the cache cannot serve it", "err", err)
		}
	}
	return s.serverList(ctx, opts, held, sc, g)
}

// serverList lists scope sc (generation g) from the server; when that
// fails for a scope other than held, the change is refused and held is
// listed instead.
func (s *Source) serverList(ctx context.Context, opts metav1.ListOptions, held, sc Scope, g uint64) (runtime.Object, error) {
	first := metav1.ListOptions{ResourceVersion: opts.ResourceVersion, ResourceVersionMatch: opts.ResourceVersionMatch}
	items, rv, err := s.listScope(ctx, sc, sc.Namespaces, first)
	if err == nil {
		err = s.canWatch(ctx, held, sc, rv)
	}
	if err != nil && ctx.Err() == nil && !sc.Equal(held) {
		s.refuse(g, sc, err)
		sc = held
		items, rv, err = s.listScope(ctx, held, held.Namespaces, first)
	}
	if err != nil {
		return nil, err
	}
	return s.serve(cycle{scope: sc, gen: g, rv: rv}, items, nil)
}

// localList serves a relist at resource version rv from the cache, which
// holds scope held, for scope sc (generation g): the cached objects sc
// keeps, and what it gains listed from the server at exactly rv (cache
// is the informer's CachedAt). A
// change whose lists the server refuses serves held, unchanged.
// errNoLocal, or the cache's error, when the cache cannot serve it.
func (s *Source) localList(ctx context.Context, cache func(context.Context, string) ([]runtime.Object, error),
	rv string, held, sc Scope, g uint64) (runtime.Object, error) {
	if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
		return nil, errNoLocal // nothing to place the cache at
	}
	wctx, cancel := context.WithTimeout(ctx, localWait)
	cached, err := cache(wctx, rv)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("waiting for the cache to reach resource version %s: %w", rv, err)
	}
	exact := metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	var gained []runtime.Object
	keep := true // the cached objects of sc's namespaces are sc's
	err = s.canWatch(ctx, held, sc, rv)
	switch {
	case err != nil:
	case !sc.sameSelectors(held) || sc.All() && !held.All():
		// The server alone knows what the new selectors select, and
		// "every namespace but these" is no request: list the new scope
		// once; unchanged objects keep their resource version and are not
		// told again.
		gained, _, err = s.listScope(ctx, sc, sc.Namespaces, exact)
		keep = false
	case !sc.All() && !held.All():
		if ns := minus(sc.Namespaces, held.Namespaces); len(ns) > 0 {
			gained, _, err = s.listScope(ctx, sc, ns, exact)
		}
	}
	if err != nil && ctx.Err() != nil {
		return nil, err // abandoned: not the server's refusal
	}
	if err != nil {
		s.refuse(g, sc, err)
		return s.serve(cycle{scope: held, gen: g, rv: rv}, copies(cached), nil)
	}
	var items []runtime.Object
	listed := make(map[types.UID]struct{}, len(gained))
	for _, o := range gained {
		if a, err := meta.Accessor(o); err == nil {
			listed[a.GetUID()] = struct{}{}
		}
	}
	left := map[types.UID]struct{}{}
	for _, o := range cached {
		a, err := meta.Accessor(o)
		if err != nil {
			continue
		}
		if _, ok := listed[a.GetUID()]; ok {
			continue
		}
		if keep && sc.hasNormal(a.GetNamespace()) {
			items = append(items, o.DeepCopyObject()) // the cache's objects stay the cache's
			continue
		}
		left[a.GetUID()] = struct{}{}
	}
	items = append(items, gained...)
	s.stats.localRelists.Add(1)
	return s.serve(cycle{scope: sc, gen: g, rv: rv}, items, left)
}

// copies deep-copies objs.
func copies(objs []runtime.Object) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopyObject()
	}
	return out
}

// refuse notes that the server refused scope sc of generation g: the
// scope asked for goes back to the one held (unless a later Update asked
// for another), and g's Update returns err.
func (s *Source) refuse(g uint64, sc Scope, err error) {
	s.stats.refused.Add(1)
	s.log.Info("Scope change refused; the old scope is kept", "scope", sc.String(), "err", err)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.st
	err = fmt.Errorf("scope: the server refused the scope %s, the scope %s is kept: %w", sc, st.held, err)
	st.lastErr = err
	if st.gen == g {
		st.desired = st.held
	}
	s.settleLocked(g, err)
}

// serve builds the list of cycle c from items, leaving out left (uids of
// cached objects, nil for none), and notes it served.
func (s *Source) serve(c cycle, items []runtime.Object, left map[types.UID]struct{}) (runtime.Object, error) {
	sel, err := labels.Parse(c.scope.LabelSelector)
	if err != nil {
		return nil, err // Validate accepted it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.st
	list, err := listobj.Build(st.template, items, c.rv)
	if err != nil {
		return nil, err
	}
	st.served, st.listed = &c, true
	st.leftScope, st.leftSel, st.left = c.scope, sel, left
	return list, nil
}

// canWatch checks, when scope sc is watched cluster-wide and held was not
// (one namespace), that the server lets the user watch cluster-wide: it
// opens that watch from resource version rv and stops it at once, so that
// a scope whose watch the server would refuse (403 for a user who may
// watch only some namespaces) is refused before its list reaches the
// cache.
func (s *Source) canWatch(ctx context.Context, held, sc Scope, rv string) error {
	if len(sc.Namespaces) == 1 || len(held.Namespaces) != 1 {
		return nil
	}
	w, err := s.inner("").WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true,
		LabelSelector: sc.LabelSelector, FieldSelector: sc.FieldSelector})
	if err != nil {
		return fmt.Errorf("watching every namespace (a scope of several namespaces is watched cluster-wide): %w", err)
	}
	w.Stop()
	return nil
}

// listScope lists namespaces nss of sc (all of them when nss is empty and
// sc is all) from the server, each whole, in pages: the first from first
// (its resource version), the others at exactly the resource version the
// first returned, so that the lists make one consistent state. It returns
// the objects and that resource version.
func (s *Source) listScope(ctx context.Context, sc Scope, nss []string, first metav1.ListOptions) ([]runtime.Object, string, error) {
	if len(nss) == 0 {
		nss = []string{""}
	}
	var out []runtime.Object
	rv := ""
	for i, ns := range nss {
		opts := first
		if i > 0 {
			opts = metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
		}
		opts.LabelSelector, opts.FieldSelector, opts.Limit = sc.LabelSelector, sc.FieldSelector, listLimit
		objs, listRV, err := s.listNamespace(ctx, ns, opts)
		if err != nil {
			if ns == "" {
				return nil, "", fmt.Errorf("listing every namespace: %w", err)
			}
			return nil, "", fmt.Errorf("listing the namespace %q: %w", ns, err)
		}
		if i == 0 {
			rv = listRV
		}
		out = append(out, objs...)
	}
	return out, rv, nil
}

// listNamespace lists one namespace whole, following continue tokens.
func (s *Source) listNamespace(ctx context.Context, ns string, opts metav1.ListOptions) ([]runtime.Object, string, error) {
	lw := s.inner(ns)
	var out []runtime.Object
	rv := ""
	for {
		list, err := lw.ListWithContext(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		s.stats.lists.Add(1)
		s.keepTemplate(list)
		items, listRV, err := listobj.Items(list)
		if err != nil {
			return nil, "", err
		}
		s.stats.listedObjects.Add(int64(len(items)))
		if rv == "" {
			rv = listRV
		}
		out = append(out, items...)
		la, err := meta.ListAccessor(list)
		if err != nil {
			return nil, "", err
		}
		if la.GetContinue() == "" {
			return out, rv, nil
		}
		opts = metav1.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector, Limit: opts.Limit, Continue: la.GetContinue()}
	}
}

// keepTemplate keeps an empty list of list's type, to build lists in.
func (s *Source) keepTemplate(list runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.template == nil {
		s.st.template = listobj.Empty(list)
	}
}
