package crcache

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/listwatch/listwatch/clientgo/informers"
	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/promprovider"
	"github.com/listwatch/listwatch/ondemand/promondemand"
	"github.com/listwatch/listwatch/restsource"
	"github.com/listwatch/listwatch/scope"
)

// New is a cache.NewCacheFunc: controller-runtime's cache, with every
// informer listwatch's, decoding with restsource and the default memory
// options (see the package doc). Use it as manager.Options.NewCache.
func New(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	return NewWithOptions(Options{})(cfg, opts)
}

// NewWithOptions returns a cache.NewCacheFunc like New, configured by o.
func NewWithOptions(o Options) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		memory := informers.DefaultMemoryOptions()
		if o.Memory != nil {
			memory = *o.Memory
		}
		logger := o.Logger
		if logger.GetSink() == nil {
			logger = logf.Log.WithName("crcache")
		}
		// The HTTP client controller-runtime's clients get: the one it
		// would build itself (or the caller's), behind a transport that
		// answers probes.
		if opts.HTTPClient == nil {
			c := rest.CopyConfig(cfg)
			if c.UserAgent == "" {
				c.UserAgent = rest.DefaultKubernetesUserAgent()
			}
			hc, err := rest.HTTPClientFor(c)
			if err != nil {
				return nil, fmt.Errorf("crcache: building the HTTP client: %w", err)
			}
			opts.HTTPClient = hc
		}
		b := &builder{cfg: cfg, httpClient: opts.HTTPClient, memory: memory, logger: logger, onNew: o.OnNewInformer, custom: opts.NewInformer,
			scheme: opts.Scheme, types: map[reflect.Type]Type{}, byClient: map[reflect.Type]bool{}}
		if b.scheme == nil {
			b.scheme = scheme.Scheme // controller-runtime's default too
		}
		for _, t := range o.Types {
			b.types[t.goType] = t
		}
		for _, obj := range o.ClientDecoded {
			b.byClient[reflect.TypeOf(obj)] = true
		}
		if o.Shard != nil {
			var err error
			if b.shard, opts, err = newSharding(*o.Shard, cfg, opts.HTTPClient, opts, logger); err != nil {
				return nil, err
			}
		}
		if o.Live != nil {
			var err error
			if b.live, opts, err = newLive(*o.Live, o.Shard != nil, cfg, opts.HTTPClient, opts, logger); err != nil {
				return nil, err
			}
		}
		if o.MetricsRegisterer != nil {
			p, err := promprovider.New(promprovider.Options{Registerer: o.MetricsRegisterer})
			if err != nil {
				return nil, fmt.Errorf("crcache: registering the metrics: %w", err)
			}
			b.metrics = p
		}
		if o.StatusPage != nil {
			o.StatusPage.add(b)
			b.named = true
		}
		opts.HTTPClient = withProbeTransport(opts.HTTPClient)
		if memory.StripManagedFields {
			opts = stripFirst(opts)
		}
		opts.NewInformer = b.newInformer
		// controller-runtime's clients wait on a limiter that lets probes
		// through without a token (see probeLimiter).
		crCfg := rest.CopyConfig(cfg)
		if b.limiter = newProbeLimiter(cfg); b.limiter != nil {
			crCfg.RateLimiter = b.limiter
		}
		c, err := cache.New(crCfg, opts)
		if err != nil {
			return nil, err
		}
		wrapped := b.shard.wrap(&waitingCache{Cache: c, scheme: b.scheme, failOnMissing: opts.ReaderFailOnMissingInformer, live: b.live})
		if len(o.OnRead) == 0 {
			return wrapped, nil
		}
		reader, err := client.New(cfg, client.Options{HTTPClient: b.httpClient, Scheme: b.scheme, Mapper: opts.Mapper})
		if err != nil {
			return nil, fmt.Errorf("crcache: the client of Options.OnRead: %w", err)
		}
		var metrics *promondemand.Collector
		if o.MetricsRegisterer != nil {
			if metrics, err = promondemand.New(o.MetricsRegisterer); err != nil {
				return nil, fmt.Errorf("crcache: registering the metrics of Options.OnRead: %w", err)
			}
		}
		withOnRead, err := newOnReadCache(wrapped, b.scheme, reader, memory.StripManagedFields, o.OnRead, metrics)
		if orc, ok := withOnRead.(*onReadCache); ok {
			b.mu.Lock()
			b.onRead = orc
			b.mu.Unlock()
		}
		return withOnRead, err
	}
}

// builder builds the informers of one cache.
type builder struct {
	cfg        *rest.Config
	httpClient *http.Client // without the probe transport
	memory     informers.MemoryOptions
	logger     logr.Logger
	onNew      func(runtime.Object, toolscache.SharedIndexInformer)
	scheme     *runtime.Scheme       // the cache's
	types      map[reflect.Type]Type // Options.Types
	byClient   map[reflect.Type]bool // Options.ClientDecoded
	// custom is the caller's cache.Options.NewInformer, if set: it builds
	// the informers instead of listwatch's constructor.
	custom func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer
	// metrics exports the informers, when Options.MetricsRegisterer is set.
	metrics *promprovider.Provider
	// named: informers are named after their resource and namespace
	// (for metrics or a status page), not their Go type.
	named bool
	// shard shards the informers, when Options.Shard is set.
	shard *sharding
	// live makes the namespaces of the informers changeable, when
	// Options.Live is set.
	live *live
	// limiter is the rate limiter of controller-runtime's clients, nil
	// when they have none.
	limiter *probeLimiter

	mu    sync.Mutex
	built []informer.Snapshotter // listwatch's informers built (described), for a StatusPage
	// onRead is the cache's Options.OnRead wrapper, nil without: the
	// snapshots of its types' metadata informers carry its figures.
	onRead *onReadCache
}

// snapshotters returns the listwatch informers the cache built.
func (b *builder) snapshotters() []informer.Snapshotter {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]informer.Snapshotter(nil), b.built...)
}

// newInformer is the cache's cache.Options.NewInformer: listwatch's
// drop-in informer (or the caller's NewInformer's) over a restsource
// Source that repeats what lw requests (learnt by a probe), or over lw
// itself when that cannot be.
func (b *builder) newInformer(lw toolscache.ListerWatcher, example runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	src, at, inNamespace, err := b.source(lw, example)
	decoder, reason := decoderRestsource, ""
	if err != nil {
		// Expected for the objects restsource does not decode (V(1));
		// worth a line when the probe failed.
		log := b.logger
		if errors.Is(err, errNotDecoded) || errors.Is(err, errByClient) {
			log = log.V(1)
		}
		log.Info("listing and watching through controller-runtime's client", "type", reflect.TypeOf(example).String(), "reason", err.Error())
		src = b.limiter.limited(lw)
		decoder, reason = decoderClient, err.Error()
	}
	var scoped *scope.Source
	if err == nil {
		src, scoped = b.live.source(src, at, example, inNamespace)
	}
	src, sharded := b.shard.source(src, lw, example)
	var inf toolscache.SharedIndexInformer
	if b.custom != nil {
		inf = b.custom(src, example, resync, indexers)
	} else {
		o := toolscache.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: indexers}
		var obs lwcache.Observers
		if b.named {
			o.ObjectDescription = at.name(example)
		}
		if b.metrics != nil {
			o.ObjectDescription = uniqueName(b.metrics, at.name(example))
			m := b.metrics.Reflector(o.ObjectDescription)
			obs = lwcache.Observers{Reflector: m, Processing: m}
		}
		inf = lwcache.NewObservedSharedIndexInformer(src, example, o, obs)
	}
	if s, ok := inf.(informer.Snapshotter); ok {
		snap := described{Snapshotter: s, at: at, decoder: decoder, reason: reason}
		if pm, ok := example.(*metav1.PartialObjectMetadata); ok {
			b.mu.Lock()
			snap.onRead = b.onRead.statsOf(pm.GroupVersionKind())
			b.mu.Unlock()
		}
		if b.metrics != nil {
			b.metrics.AddInformer(snap, at.gvr)
		}
		b.mu.Lock()
		b.built = append(b.built, snap)
		b.mu.Unlock()
	}
	if b.onNew != nil {
		b.onNew(example, inf)
	}
	b.live.attach(scoped, inf)
	return b.shard.attach(sharded, inf)
}

// where is what an informer lists and watches, as far as the cache knows.
type where struct {
	gvr       schema.GroupVersionResource
	namespace string
	// labelSelector and fieldSelector are the ones the probe learnt.
	labelSelector, fieldSelector string
}

// name is the informer's name in metrics: its resource (or example's Go
// type) and namespace.
func (w where) name(example runtime.Object) string {
	n := w.gvr.Resource
	if n == "" {
		n = reflect.TypeOf(example).String()
	}
	if w.namespace != "" {
		n += "/" + w.namespace
	}
	return n
}

// source is a restsource Source for example's type requesting what lw
// requests, and where that is; inNamespace makes the same Source for
// another namespace ("" for all).
func (b *builder) source(lw toolscache.ListerWatcher, example runtime.Object) (src toolscache.ListerWatcher, at where,
	inNamespace func(namespace string) (toolscache.ListerWatcher, error), err error) {
	dec, err := decodingOf(example, b.types, b.byClient, b.scheme)
	if err != nil {
		return nil, where{}, nil, err
	}
	at = where{gvr: dec.gv.WithResource(dec.resource)}
	req, err := probeListWatch(lw)
	if err != nil {
		return nil, at, nil, err
	}
	client, err := b.restClient(dec.gv.Group, dec.gv.Version)
	if err != nil {
		return nil, at, nil, err
	}
	namespace, resource, err := splitPath(req.path, client.Get().URL().Path)
	if err != nil {
		return nil, at, nil, err
	}
	if dec.resource == "" {
		at.gvr.Resource = resource
	}
	at.namespace, at.labelSelector, at.fieldSelector = namespace, req.labelSelector, req.fieldSelector
	if resource != at.gvr.Resource || (namespace != "" && dec.resource != "" && !dec.namespaced) {
		return nil, at, nil, fmt.Errorf("the list's path %s is not of %s", req.path, at.gvr)
	}
	inNamespace = func(namespace string) (toolscache.ListerWatcher, error) {
		return b.restsourceOf(dec, client, resource, namespace, req)
	}
	src, err = inNamespace(namespace)
	return src, at, inNamespace, err
}

// restsourceOf is the restsource Source of dec's type in namespace ("" for
// all) with the selectors and bookmarks of req.
func (b *builder) restsourceOf(dec decoding, client *rest.RESTClient, resource, namespace string, req request) (toolscache.ListerWatcher, error) {
	return dec.new(b.memory.Source(restsource.Options{
		Client:    client,
		Resource:  resource,
		Namespace: namespace,
		TweakListOptions: func(o *metav1.ListOptions) {
			o.LabelSelector, o.FieldSelector = req.labelSelector, req.fieldSelector
			// A streaming list needs bookmarks, whatever the cache's
			// setting; so does controller-runtime's own informer.
			if o.Watch && o.SendInitialEvents == nil {
				o.AllowWatchBookmarks = req.bookmarks
			}
		},
	}))
}

// names holds the informer names in use per metrics provider: one
// provider serves every cache registered on the same registry.
var names = struct {
	sync.Mutex
	used map[*promprovider.Provider]map[string]bool
}{used: map[*promprovider.Provider]map[string]bool{}}

// uniqueName is name, or name#2, name#3, ..., the first not yet used
// with p.
func uniqueName(p *promprovider.Provider, name string) string {
	names.Lock()
	defer names.Unlock()
	used := names.used[p]
	if used == nil {
		used = map[string]bool{}
		names.used[p] = used
	}
	n := name
	for i := 2; used[n]; i++ {
		n = fmt.Sprintf("%s#%d", name, i)
	}
	used[n] = true
	return n
}

// restClient is a REST client of the group version over the cache's HTTP
// client (without the probe), as a clientset's.
func (b *builder) restClient(group, version string) (*rest.RESTClient, error) {
	c := rest.CopyConfig(b.cfg)
	c.GroupVersion = &schema.GroupVersion{Group: group, Version: version}
	c.APIPath = "/apis"
	if group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.RESTClientForConfigAndClient(c, b.httpClient)
}

// stripFirst makes every transform of opts strip managedFields first: the
// default transform and each ByObject's and namespace's own.
func stripFirst(opts cache.Options) cache.Options {
	opts.DefaultTransform = thenStrip(opts.DefaultTransform)
	byObject := make(map[client.Object]cache.ByObject, len(opts.ByObject))
	for obj, bo := range opts.ByObject {
		if bo.Transform != nil {
			bo.Transform = thenStrip(bo.Transform)
		}
		if bo.Namespaces != nil {
			bo.Namespaces = stripNamespaces(bo.Namespaces)
		}
		byObject[obj] = bo
	}
	if opts.ByObject != nil {
		opts.ByObject = byObject
	}
	opts.DefaultNamespaces = stripNamespaces(opts.DefaultNamespaces)
	return opts
}

func stripNamespaces(in map[string]cache.Config) map[string]cache.Config {
	if in == nil {
		return nil
	}
	out := make(map[string]cache.Config, len(in))
	for ns, c := range in {
		if c.Transform != nil {
			c.Transform = thenStrip(c.Transform)
		}
		out[ns] = c
	}
	return out
}

// thenStrip strips an object's managedFields, then runs next (if set).
func thenStrip(next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
			obj.SetManagedFields(nil)
		}
		if next == nil {
			return in, nil
		}
		return next(in)
	}
}
