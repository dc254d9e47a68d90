package crcache

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/store"
)

// ShardOptions makes a cache one member of a ring of replicas (package
// shard) that share the cached objects between them: see the package doc,
// "Sharding".
type ShardOptions struct {
	// Member configures the cache's place in the ring: Namespace and Ring
	// are required, Identity defaults to POD_NAME or the host name (two
	// live replicas must never share one). Client nil means a clientset
	// over the manager's config and HTTP client. OnChange, if set, is
	// called with every Change after the cache's informers got it. The
	// member joins the ring when the cache starts and leaves it (its Lease
	// deleted) once the cache's informers have stopped.
	Member shard.MemberOptions

	// Objects are the types whose informers are sharded, each with the
	// field hashed to place its objects (shard.FieldUID or
	// shard.FieldNamespace; empty means shard.FieldUID); the informers of
	// other types cache everything. Types are matched by
	// GroupVersionKind, so a type's typed, unstructured and metadata-only
	// informers follow the same entry.
	//
	// Nil means every namespaced type but Leases, hashed by
	// shard.FieldNamespace: all of a namespace's objects on one member, so
	// that an object and those it owns or reads in its namespace are
	// cached together (a controller's For and Owns types agree). Cluster-
	// scoped types are sharded only when listed here, and then best by
	// uid (by namespace, they would all go to one member).
	Objects map[client.Object]shard.Field
}

// sharding is the sharding of one cache: its member, which informers are
// sharded, and their sources.
type sharding struct {
	member *shard.Member
	scheme *runtime.Scheme
	// fields is ShardOptions.Objects by GroupVersionKind; nil for the
	// default.
	fields map[schema.GroupVersionKind]shard.Field
	// namespaced reports whether a type is namespaced (the cache's
	// mapper).
	namespaced func(schema.GroupVersionKind) (bool, error)
	log        logr.Logger
	// ctx carries log, for the sources.
	ctx context.Context
	// onChange is the user's MemberOptions.OnChange, or nil.
	onChange func(shard.Change)

	// mu guards last and parts, and orders the Changes each part gets.
	mu sync.Mutex
	// last is the member's latest Change, nil before the first: an
	// informer built later gets it at once.
	last *shard.Change
	// parts are the cache's sharded informers.
	parts []*shardedInformer
}

// newSharding checks o and returns the cache's sharding, with opts'
// scheme and mapper set (controller-runtime's defaults) so that the cache
// and the sharding agree on types.
func newSharding(o ShardOptions, cfg *rest.Config, httpClient *http.Client, opts cache.Options, log logr.Logger) (*sharding, cache.Options, error) {
	opts, err := withTypes(cfg, httpClient, opts)
	if err != nil {
		return nil, opts, fmt.Errorf("crcache: sharding: %w", err)
	}
	mapper := opts.Mapper
	s := &sharding{scheme: opts.Scheme, log: log.WithName("shard"), onChange: o.Member.OnChange,
		namespaced: func(gvk schema.GroupVersionKind) (bool, error) { return apiutil.IsGVKNamespaced(gvk, mapper) }}
	s.ctx = klog.NewContext(context.Background(), s.log)
	if o.Objects != nil {
		s.fields = make(map[schema.GroupVersionKind]shard.Field, len(o.Objects))
		for obj, f := range o.Objects {
			gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
			if err != nil {
				return nil, opts, fmt.Errorf("crcache: ShardOptions.Objects: %w", err)
			}
			if f == "" {
				f = shard.FieldUID
			}
			if !f.Valid() {
				return nil, opts, fmt.Errorf("crcache: ShardOptions.Objects: %v: field %q is neither %s nor %s", gvk, f, shard.FieldUID, shard.FieldNamespace)
			}
			s.fields[gvk] = f
		}
	}
	mo := o.Member
	if mo.Client == nil {
		cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
		if err != nil {
			return nil, opts, fmt.Errorf("crcache: sharding: building the Lease client: %w", err)
		}
		mo.Client = cs
	}
	mo.OnChange = s.change
	m, err := shard.NewMember(s.ctx, mo)
	if err != nil {
		return nil, opts, fmt.Errorf("crcache: %w", err)
	}
	s.member = m
	return s, opts, nil
}

// withTypes returns opts with its scheme and mapper set
// (controller-runtime's defaults), so that the cache and what the
// cache's builder decides by type (sharding, live namespaces) agree.
func withTypes(cfg *rest.Config, httpClient *http.Client, opts cache.Options) (cache.Options, error) {
	if opts.Scheme == nil {
		opts.Scheme = scheme.Scheme
	}
	if opts.Mapper == nil {
		m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
		if err != nil {
			return opts, fmt.Errorf("building the REST mapper: %w", err)
		}
		opts.Mapper = m
	}
	return opts, nil
}

// field is the field by which the informers of example's type are
// sharded; ok is false for a type cached whole.
func (s *sharding) field(example runtime.Object) (f shard.Field, ok bool, err error) {
	gvk, err := apiutil.GVKForObject(example, s.scheme)
	if err != nil {
		return "", false, err
	}
	if s.fields != nil {
		f, ok = s.fields[gvk]
		return f, ok, nil
	}
	if gvk.Group == coordinationv1.GroupName && gvk.Kind == "Lease" {
		return "", false, nil
	}
	namespaced, err := s.namespaced(gvk)
	if err != nil || !namespaced {
		return "", false, err
	}
	return shard.FieldNamespace, true, nil
}

// source wraps src, what an informer of example's type lists and watches
// (lw is controller-runtime's ListWatch for it), in a shard.Source when
// the type is sharded; it returns src and nil otherwise. s may be nil
// (no sharding).
func (s *sharding) source(src, lw toolscache.ListerWatcher, example runtime.Object) (toolscache.ListerWatcher, *shardedInformer) {
	if s == nil {
		return src, nil
	}
	f, ok, err := s.field(example)
	if err != nil {
		// Cached whole rather than not at all: the controller then sees
		// every key, as without sharding, and the log says why.
		s.log.Error(err, "not sharding an informer: its type's scope is unknown", "type", fmt.Sprintf("%T", example))
		return src, nil
	}
	if !ok {
		return src, nil
	}
	ss, err := shard.NewSource(s.ctx, shard.SourceOptions{Inner: toolscache.ToListerWatcherWithContext(src), Field: f, Name: sourceName(example, lw, s.scheme)})
	if err != nil {
		s.log.Error(err, "not sharding an informer", "type", fmt.Sprintf("%T", example))
		return src, nil
	}
	return sourceLW{ss}, &shardedInformer{src: ss, field: f}
}

// attach ties p's source to inf, its informer, and returns inf behind the
// handler filter (or inf itself when p is nil). The source gets the
// member's latest Change, if any.
func (s *sharding) attach(p *shardedInformer, inf toolscache.SharedIndexInformer) toolscache.SharedIndexInformer {
	if p == nil {
		return inf
	}
	p.SharedIndexInformer = inf
	// listwatch's own informer relists from its cache on a Change; any
	// other ends its watches with 410 Gone and relists from the server.
	if u, ok := inf.(interface {
		Informer() *informer.Informer[store.Object]
	}); ok {
		shard.Attach(p.src, u.Informer())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts = append(s.parts, p)
	if s.last != nil {
		p.src.Update(*s.last)
	}
	return p
}

// change is the member's OnChange: every sharded informer's source gets
// c, then the handlers get the cached objects of the slices gained, whose
// changes they may not have heard of while the slices were away (see
// shardedInformer), then the user's OnChange gets c.
func (s *sharding) change(c shard.Change) {
	s.mu.Lock()
	s.last = &c
	parts := append([]*shardedInformer(nil), s.parts...)
	for _, p := range parts {
		p.src.Update(c)
	}
	s.mu.Unlock()
	if len(c.Gained) > 0 {
		for _, p := range parts {
			p.replayGained(c)
		}
	}
	if s.onChange != nil {
		s.onChange(c)
	}
}

// shardedCache is a cache whose Start also runs its member.
type shardedCache struct {
	cache.Cache
	s *sharding
}

// wrap returns c running s's member with it (c itself when s is nil).
func (s *sharding) wrap(c cache.Cache) cache.Cache {
	if s == nil {
		return c
	}
	return &shardedCache{Cache: c, s: s}
}

// Start joins the ring, runs the cache until ctx ends and leaves the ring
// once the informers have stopped: the member's Lease is deleted only
// when nothing of this cache can hand out a key any more.
func (c *shardedCache) Start(ctx context.Context) error {
	memberCtx, leave := context.WithCancel(context.WithoutCancel(ctx))
	defer leave()
	done := make(chan error, 1)
	go func() { done <- c.s.member.Run(memberCtx) }()
	err := c.Cache.Start(ctx)
	leave()
	return errors.Join(err, <-done)
}

// NeedLeaderElection passes on the wrapped cache's answer (false for
// controller-runtime's): every replica runs its cache.
func (c *shardedCache) NeedLeaderElection() bool { return needLeaderElection(c.Cache) }

// ShardMember returns the ring member of a cache built with
// Options.Shard (a manager's GetCache), for its Status and Assignment;
// nil for any other cache.
func ShardMember(c cache.Cache) *shard.Member {
	if sc, ok := c.(*shardedCache); ok {
		return sc.s.member
	}
	return nil
}

// sourceLW is a shard.Source as a cache.ListerWatcher (informers take
// one); reflectors call its context methods.
type sourceLW struct{ *shard.Source }

func (l sourceLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l sourceLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// sourceName names an informer's source in its member's handover
// announcements: the same on every replica for the same informer (its
// kind, namespace and selectors), different for two informers of one
// cache. A DNS label: the kind, lower-cased, and a hash of the rest.
func sourceName(example runtime.Object, lw toolscache.ListerWatcher, sch *runtime.Scheme) string {
	gvk, _ := apiutil.GVKForObject(example, sch)
	h := fnv.New32a()
	fmt.Fprint(h, gvk.String())
	// The list's path and selectors, learnt by a probe (nothing is sent).
	if req, err := probeListWatch(lw); err == nil {
		fmt.Fprint(h, "|", req.path, "|", req.labelSelector, "|", req.fieldSelector)
	}
	kind := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, gvk.Kind)
	if len(kind) > 40 {
		kind = kind[:40]
	}
	if kind == "" {
		kind = "object"
	}
	return fmt.Sprintf("%s-%08x", kind, h.Sum32())
}

// shardedInformer is a sharded informer as the cache hands it to
// controller-runtime: its handlers hear only the objects the member owns
// (shard.Source.Owns). While a lost slice is handed over the informer
// keeps it cached and watched, but its adds and updates reach no handler
// (the new owner's do), its objects moving away reach no handler either
// (they are not deleted), and a deletion on the server reaches the
// handlers whoever owns the object now.
type shardedInformer struct {
	toolscache.SharedIndexInformer
	src   *shard.Source
	field shard.Field

	// mu guards handlers: the filters registered and not removed, by
	// their registration.
	mu       sync.Mutex
	handlers map[toolscache.ResourceEventHandlerRegistration]ownedHandler
}

// Status passes on the reflector status of the informer under p, for a
// wait for the sync that stops at a lasting error; the zero Status for
// informers that have none.
func (p *shardedInformer) Status() reflector.Status {
	if st, ok := p.SharedIndexInformer.(interface{ Status() reflector.Status }); ok {
		return st.Status()
	}
	return reflector.Status{}
}

func (p *shardedInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return p.add(h, func(o ownedHandler) (toolscache.ResourceEventHandlerRegistration, error) {
		return p.SharedIndexInformer.AddEventHandler(o)
	})
}

func (p *shardedInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return p.add(h, func(o ownedHandler) (toolscache.ResourceEventHandlerRegistration, error) {
		return p.SharedIndexInformer.AddEventHandlerWithResyncPeriod(o, resync)
	})
}

func (p *shardedInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return p.add(h, func(o ownedHandler) (toolscache.ResourceEventHandlerRegistration, error) {
		return p.SharedIndexInformer.AddEventHandlerWithOptions(o, opts)
	})
}

func (p *shardedInformer) add(h toolscache.ResourceEventHandler, register func(ownedHandler) (toolscache.ResourceEventHandlerRegistration, error)) (toolscache.ResourceEventHandlerRegistration, error) {
	o := ownedHandler{h: h, owns: p.src.Owns}
	reg, err := register(o)
	if err != nil {
		return reg, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.handlers == nil {
		p.handlers = map[toolscache.ResourceEventHandlerRegistration]ownedHandler{}
	}
	p.handlers[reg] = o
	return reg, nil
}

func (p *shardedInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	p.mu.Lock()
	delete(p.handlers, reg)
	p.mu.Unlock()
	return p.SharedIndexInformer.RemoveEventHandler(reg)
}

// replayGained hands the handlers, as adds, the cached objects of the
// slices c gained: a slice lost and handed back before its new owner
// listed it never left the cache, and its changes meanwhile reached no
// handler. Objects of slices gained from another member arrive by the
// relist too; a work queue takes a key once.
func (p *shardedInformer) replayGained(c shard.Change) {
	gained, err := c.GainedMatcher(p.field)
	if err != nil {
		return
	}
	p.mu.Lock()
	hs := make([]ownedHandler, 0, len(p.handlers))
	for _, h := range p.handlers {
		hs = append(hs, h)
	}
	p.mu.Unlock()
	if len(hs) == 0 {
		return
	}
	for _, item := range p.GetStore().List() {
		obj, ok := item.(metav1.Object)
		if !ok || !gained.Owns(obj) {
			continue
		}
		for _, h := range hs {
			h.OnAdd(item, false)
		}
	}
}

// ownedHandler passes on to h the notifications of objects the member
// owns (owns), and every deletion on the server; a deletion with
// finalStateUnknown of an object it does not own is a move to another
// member and is dropped.
type ownedHandler struct {
	h    toolscache.ResourceEventHandler
	owns func(metav1.Object) bool
}

func (o ownedHandler) owned(obj any) bool {
	m, ok := obj.(metav1.Object)
	return !ok || o.owns(m)
}

func (o ownedHandler) OnAdd(obj any, initial bool) {
	if o.owned(obj) {
		o.h.OnAdd(obj, initial)
	}
}

func (o ownedHandler) OnUpdate(old, new any) {
	if o.owned(new) {
		o.h.OnUpdate(old, new)
	}
}

func (o ownedHandler) OnDelete(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok && !o.owned(d.Obj) {
		return
	}
	o.h.OnDelete(obj)
}
