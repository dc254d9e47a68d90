package operator

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options configures NewManager.
type Options struct {
	// Config reaches the apiserver; required.
	Config *rest.Config
	// Namespace limits the cache (and so the operator) to one namespace;
	// empty watches all namespaces.
	Namespace string
	// Informers picks the informer implementation; empty means Listwatch.
	Informers Informers
	// StripManagedFields leaves managedFields out of the cache: with
	// Listwatch while decoding (crcache's default, turned off when this is
	// false), with ClientGo by cache.TransformStripManagedFields as the
	// cache's default transform; otherwise no transform is set (and
	// controller-runtime calls SetTransform(nil) on every informer).
	StripManagedFields bool
	// WatchErrorHandler, if set, becomes the cache's
	// DefaultWatchErrorHandler (installed on every informer with
	// SetWatchErrorHandlerWithContext).
	WatchErrorHandler toolscache.WatchErrorHandlerWithContext
	// ReadYourWrites turns on controller-runtime's experimental
	// client.CacheOptions.EnableReadYourWritesConsistency: reads from the
	// cache wait until it has seen the client's own earlier writes.
	ReadYourWrites bool
	// MaxConcurrentReconciles defaults to 1, controller-runtime's default.
	MaxConcurrentReconciles int
	// Counters, if set, receives the reconciler's write counts.
	Counters *Counters
	// OnNewInformer, if set, is called with every informer the cache
	// builds (before controller-runtime configures it), e.g. to check which
	// implementation is in use: a multi-namespace cache hides them.
	OnNewInformer func(example runtime.Object, inf toolscache.SharedIndexInformer)
}

// NewManager builds a controller-runtime manager running the digest
// operator: a controller for Secrets that owns one ConfigMap each, with a
// field index on the ConfigMaps' controlling Secret. Its cache is the
// one opts.Informers names (Informers.NewCache): the one line that
// matters is manager.Options{NewCache: crcache.New}. Metrics and health
// endpoints are off and leader election is not used. The logger comes from
// ctx. Start the returned manager with mgr.Start(ctx).
func NewManager(ctx context.Context, opts Options) (manager.Manager, error) {
	if opts.Config == nil {
		return nil, errors.New("operator: Options.Config is required")
	}
	newCache, err := opts.Informers.NewCache(opts.StripManagedFields, opts.OnNewInformer)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("operator: building the scheme: %w", err)
	}
	cacheOpts := cache.Options{DefaultWatchErrorHandler: opts.WatchErrorHandler}
	if opts.Namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{opts.Namespace: {}}
	}
	mgr, err := ctrl.NewManager(opts.Config, manager.Options{
		Scheme:                 scheme,
		Logger:                 klog.FromContext(ctx),
		NewCache:               newCache,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Client: client.Options{Cache: &client.CacheOptions{
			EnableReadYourWritesConsistency: ptr.To(opts.ReadYourWrites),
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("operator: building the manager: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, OwnerField, ownerIndex); err != nil {
		return nil, fmt.Errorf("operator: indexing ConfigMaps by owner: %w", err)
	}
	counters := opts.Counters
	if counters == nil {
		counters = &Counters{}
	}
	r := &Reconciler{Client: mgr.GetClient(), Scheme: scheme, Counters: counters}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("secret-digest").
		For(&corev1.Secret{}).
		Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(opts.MaxConcurrentReconciles, 1),
			// Tests and benchmarks run several managers in one process.
			SkipNameValidation: ptr.To(true),
		}).
		Complete(r)
	if err != nil {
		return nil, fmt.Errorf("operator: building the controller: %w", err)
	}
	return mgr, nil
}
