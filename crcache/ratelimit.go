package crcache

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
)

// Probes take no client-side rate-limiter token. client-go's
// rest.Request waits on its REST client's limiter before a list reaches
// the transport (a watch waits on none), and controller-runtime
// (v0.25.2, pkg/cache/internal's makeListWatcher) builds one REST client
// per informer from the rest.Config given to cache.New: typed objects
// through apiutil.RESTClientForGVK, unstructured and metadata-only ones
// through the dynamic and metadata clients, all over
// rest.RESTClientForConfigAndClient. That limiter is the config's
// RateLimiter, shared by every client, or when it is nil a token bucket of
// the config's QPS and Burst built for each client (none when QPS < 0).
// The one other client controller-runtime builds from that config is its
// REST mapper's discovery client, when cache.Options.Mapper is nil.
//
// The cache hands cache.New a copy of the config whose RateLimiter is a
// probeLimiter: a request carrying a probe takes no token; any other
// waits where it would have waited (see probeLimiter.Wait).

// bucketKey is the context key of the rate limiter an informer's own
// requests through controller-runtime's ListWatch wait on.
type bucketKey struct{}

// probeLimiter is the RateLimiter of the clients controller-runtime
// builds from the cache's config.
type probeLimiter struct {
	// shared is the config's own RateLimiter, which every client shares
	// as before; nil when each client had a bucket of its own.
	shared flowcontrol.RateLimiter
	// qps and burst make an informer's own bucket (when shared is nil).
	qps   float32
	burst int
	// others is the bucket of the requests that carry none of an
	// informer: those of the REST mapper's discovery client, the one
	// other client of the config (when shared is nil).
	others flowcontrol.RateLimiter
}

// newProbeLimiter returns the limiter of the clients built from cfg, and
// nil when they have none (cfg.RateLimiter nil and QPS < 0): probes then
// take no token as it is. QPS and Burst are defaulted as
// rest.RESTClientForConfigAndClient defaults them.
func newProbeLimiter(cfg *rest.Config) *probeLimiter {
	if cfg.RateLimiter != nil {
		return &probeLimiter{shared: cfg.RateLimiter}
	}
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps <= 0 {
		return nil
	}
	return &probeLimiter{qps: qps, burst: burst, others: flowcontrol.NewTokenBucketRateLimiter(qps, burst)}
}

// own returns the limiter of one informer's requests through
// controller-runtime's ListWatch: a bucket of its own, as its REST client
// had, or the shared limiter.
func (l *probeLimiter) own() flowcontrol.RateLimiter {
	if l.shared != nil {
		return l.shared
	}
	return flowcontrol.NewTokenBucketRateLimiter(l.qps, l.burst)
}

// Wait returns at once for a probe's request (its context carries a
// *probe), takes no token and sends nothing. Any other request waits on
// the shared limiter, or on the bucket of the informer whose request it
// is (its context carries one: see limitedListWatch), or on others.
func (l *probeLimiter) Wait(ctx context.Context) error {
	if _, ok := ctx.Value(probeKey{}).(*probe); ok {
		return nil
	}
	return l.of(ctx).Wait(ctx)
}

func (l *probeLimiter) of(ctx context.Context) flowcontrol.RateLimiter {
	if l.shared != nil {
		return l.shared
	}
	if b, ok := ctx.Value(bucketKey{}).(flowcontrol.RateLimiter); ok {
		return b
	}
	return l.others
}

// TryAccept, Accept, Stop and QPS are the shared limiter's, or the
// mapper's bucket's: client-go's requests only Wait.
func (l *probeLimiter) TryAccept() bool { return l.of(context.Background()).TryAccept() }
func (l *probeLimiter) Accept()         { l.of(context.Background()).Accept() }
func (l *probeLimiter) Stop()           { l.of(context.Background()).Stop() }
func (l *probeLimiter) QPS() float32    { return l.of(context.Background()).QPS() }

// limitedListWatch is controller-runtime's ListWatch with the contexts of
// its requests carrying the informer's own limiter (bucketKey), so that
// an informer listing through it waits as its REST client would have.
type limitedListWatch struct {
	lw      toolscache.ListerWatcherWithContext
	limiter flowcontrol.RateLimiter
}

// limited is lw with its requests waiting on their own limiter of l (lw
// itself when l is nil or shared: the context then needs nothing).
func (l *probeLimiter) limited(lw toolscache.ListerWatcher) toolscache.ListerWatcher {
	if l == nil || l.shared != nil {
		return lw
	}
	return &limitedListWatch{lw: toolscache.ToListerWatcherWithContext(lw), limiter: l.own()}
}

func (w *limitedListWatch) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, bucketKey{}, w.limiter)
}

func (w *limitedListWatch) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return w.lw.ListWithContext(w.ctx(ctx), o)
}

func (w *limitedListWatch) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return w.lw.WatchWithContext(w.ctx(ctx), o)
}

// List and Watch are for callers without a context (client-go's older
// informers).
func (w *limitedListWatch) List(o metav1.ListOptions) (runtime.Object, error) {
	return w.ListWithContext(context.Background(), o)
}

func (w *limitedListWatch) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return w.WatchWithContext(context.Background(), o)
}

// IsWatchListSemanticsUnSupported passes on what lw declares about
// streaming lists.
func (w *limitedListWatch) IsWatchListSemanticsUnSupported() bool {
	u, ok := w.lw.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}
