// Package liveoperator is a controller-runtime operator whose namespaces
// come from a ConfigMap and change while it runs, without a restart: its
// cache is listwatch's (crcache) with Options.Live, and a listwatch
// informer on the ConfigMap calls crcache.SetNamespaces on every change.
// A namespace added is listed alone and its Pods reconciled; a namespace
// removed leaves the cache with no request, its Pods reconciled once more
// as gone; the controller's queue and the manager go on. See
// docs/operations.md, "Changing scope at run time".
package liveoperator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/scope"
)

// NamespacesKey is the key of the configuration ConfigMap that lists the
// namespaces to watch, comma-separated; empty or absent means every
// namespace.
const NamespacesKey = "namespaces"

// Options configures New.
type Options struct {
	// Config reaches the apiserver; required.
	Config *rest.Config
	// ConfigNamespace and ConfigName name the configuration ConfigMap;
	// required.
	ConfigNamespace, ConfigName string
	// Reconciled, if set, is called after each reconcile with the Pod's
	// key and whether it is in the cache.
	Reconciled func(key string, exists bool)
	// Changed, if set, is called after each change of namespaces with
	// the namespaces and SetNamespaces' error.
	Changed func(namespaces []string, err error)
}

// Operator is the manager and the informer on its configuration.
type Operator struct {
	mgr    manager.Manager
	config *informer.Informer[*corev1.ConfigMap]
	opts   Options
	// wanted carries the namespaces of each configuration seen.
	wanted chan []string
}

// New builds the operator: its manager's cache starts with the namespaces
// the configuration ConfigMap lists now.
func New(ctx context.Context, opts Options) (*Operator, error) {
	if opts.Config == nil || opts.ConfigNamespace == "" || opts.ConfigName == "" {
		return nil, errors.New("liveoperator: Options.Config, ConfigNamespace and ConfigName are required")
	}
	cs, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	cm, err := cs.CoreV1().ConfigMaps(opts.ConfigNamespace).Get(ctx, opts.ConfigName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("liveoperator: reading the configuration: %w", err)
	}
	first := namespacesOf(cm)
	if err := (scope.Scope{Namespaces: first}).Validate(); err != nil {
		return nil, fmt.Errorf("liveoperator: the configuration: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(opts.Config, manager.Options{
		Scheme:                 scheme,
		Logger:                 klog.FromContext(ctx),
		NewCache:               crcache.NewWithOptions(crcache.Options{Live: &crcache.LiveOptions{Namespaces: first}}),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("liveoperator: building the manager: %w", err)
	}
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var pod corev1.Pod
		err := mgr.GetClient().Get(ctx, req.NamespacedName, &pod)
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		if opts.Reconciled != nil {
			opts.Reconciled(req.String(), err == nil)
		}
		return reconcile.Result{}, nil
	})
	err = ctrl.NewControllerManagedBy(mgr).Named("pods").For(&corev1.Pod{}).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}).Complete(r)
	if err != nil {
		return nil, fmt.Errorf("liveoperator: building the controller: %w", err)
	}
	config, err := informer.New(informer.Options[*corev1.ConfigMap]{Name: "operator-config", Source: reflector.FromListerWatcher(
		toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", opts.ConfigNamespace,
			fieldSelectorName(opts.ConfigName)))})
	if err != nil {
		return nil, err
	}
	o := &Operator{mgr: mgr, config: config, opts: opts, wanted: make(chan []string, 1)}
	if _, err := config.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { o.want(namespacesOf(cm)) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { o.want(namespacesOf(cm)) },
	}, informer.HandlerOptions{}); err != nil {
		return nil, err
	}
	return o, nil
}

// Manager returns the operator's manager.
func (o *Operator) Manager() manager.Manager { return o.mgr }

// want hands the latest namespaces to Run, replacing any not yet taken.
func (o *Operator) want(nss []string) {
	select {
	case <-o.wanted:
	default:
	}
	o.wanted <- nss
}

// Run runs the manager and applies every change of the configuration
// until ctx ends.
func (o *Operator) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 2)
	go func() { done <- o.mgr.Start(ctx) }()
	go func() { done <- o.config.Run(ctx) }()
	for {
		select {
		case <-ctx.Done():
			return errors.Join(<-done, <-done)
		case nss := <-o.wanted:
			err := crcache.SetNamespaces(ctx, o.mgr.GetCache(), nss...)
			if err != nil {
				klog.FromContext(ctx).Error(err, "Namespaces not changed", "namespaces", nss)
			}
			if o.opts.Changed != nil {
				o.opts.Changed(nss, err)
			}
		}
	}
}

// namespacesOf reads the namespaces of a configuration ConfigMap.
func namespacesOf(cm *corev1.ConfigMap) []string {
	var out []string
	for ns := range strings.SplitSeq(cm.Data[NamespacesKey], ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// fieldSelectorName selects the object named name.
func fieldSelectorName(name string) fields.Selector {
	return fields.OneTermEqualSelector("metadata.name", name)
}
