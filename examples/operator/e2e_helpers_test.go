package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// running is an operator started by startOperator.
type running struct {
	mgr         manager.Manager
	counters    *Counters
	ctx         context.Context // the manager's; ends with stop
	watchErrors atomic.Int64
	// lastWatchError is the error the watch error handler saw last.
	lastWatchError atomic.Pointer[error]
	// built records every informer the cache built, by the example
	// object's type ("*v1.Secret").
	built sync.Map
	stop  context.CancelFunc
	done  chan error // receives Start's result once
}

// startOperator starts the operator built from opts (plus recording
// hooks) on a context of its own (spec contexts end with their node) and
// waits until its informers for both kinds have synced. stopAndWait ends
// it.
func startOperator(opts Options, logger klog.Logger) (*running, error) {
	r, err := launchOperator(opts, logger)
	if err != nil {
		return nil, err
	}
	// The controller's sources ask for their informers once the manager
	// runs; asking here too (GetInformer blocks until synced) makes the
	// operator ready when this returns.
	for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}} {
		if _, err := r.mgr.GetCache().GetInformer(r.ctx, obj); err != nil {
			r.stop()
			return nil, fmt.Errorf("informer for %T: %w (manager: %v)", obj, err, <-r.done)
		}
	}
	return r, nil
}

// launchOperator builds the operator from opts (adding the recording
// hooks) and starts its manager without waiting for anything.
func launchOperator(opts Options, logger klog.Logger) (*running, error) {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	r := &running{ctx: ctx, counters: &Counters{}, stop: cancel, done: make(chan error, 1)}
	opts.Counters = r.counters
	opts.OnNewInformer = func(example runtime.Object, inf toolscache.SharedIndexInformer) {
		r.built.Store(fmt.Sprintf("%T", example), inf)
	}
	opts.WatchErrorHandler = func(_ context.Context, _ *toolscache.Reflector, err error) {
		r.watchErrors.Add(1)
		r.lastWatchError.Store(&err)
	}
	mgr, err := NewManager(ctx, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	r.mgr = mgr
	go func() { r.done <- mgr.Start(ctx) }()
	return r, nil
}

// stopAndWait stops the manager and returns Start's result.
func (r *running) stopAndWait() error {
	r.stop()
	return <-r.done
}

// converged checks, against the apiserver itself, that every Secret in ns
// has exactly its digest ConfigMap, controlled by it, and that no digest
// outlives its Secret.
func converged(ctx context.Context, c kubernetes.Interface, ns string) error {
	secrets, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	cms, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: DigestOfLabel})
	if err != nil {
		return err
	}
	byName := map[string]*corev1.ConfigMap{}
	for i := range cms.Items {
		byName[cms.Items[i].Name] = &cms.Items[i]
	}
	var errs []error
	for i := range secrets.Items {
		s := &secrets.Items[i]
		cm, ok := byName[DigestName(s.Name)]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("secret %s has no digest", s.Name))
		case !Matches(cm, s):
			errs = append(errs, fmt.Errorf("digest of %s is %v, want %v", s.Name, cm.Data, Digest(s)))
		case !metav1.IsControlledBy(cm, s):
			errs = append(errs, fmt.Errorf("digest of %s is not controlled by it", s.Name))
		}
		delete(byName, DigestName(s.Name))
	}
	for name := range byName {
		errs = append(errs, fmt.Errorf("digest %s has no secret", name))
	}
	return errors.Join(errs...)
}

func newSecret(ns, name, value string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string][]byte{"value": []byte(value), "fixed": []byte("same")},
	}
}

// setSecret updates the named Secret's value, retrying on conflicts.
func setSecret(ctx context.Context, c kubernetes.Interface, ns, name, value string) {
	Eventually(func() error {
		s, err := c.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Data["value"] = []byte(value)
		_, err = c.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	}).WithContext(ctx).Should(Succeed())
}

// informerTypes returns what built records: example type to informer type.
func (r *running) informerTypes() map[string]string {
	out := map[string]string{}
	r.built.Range(func(k, v any) bool {
		out[k.(string)] = fmt.Sprintf("%T", v)
		return true
	})
	return out
}

// wantInformerType is the informer type impl builds.
func wantInformerType(impl Informers) string {
	if impl == Listwatch {
		return "*cache.listwatchInformer" // the drop-in's concrete type (clientgo/tools/cache)
	}
	return "*cache.sharedIndexInformer"
}

// builtInformer returns the informer the cache built for the example type.
func (r *running) builtInformer(exampleType string) toolscache.SharedIndexInformer {
	inf, ok := r.built.Load(exampleType)
	if !ok {
		return nil
	}
	return inf.(toolscache.SharedIndexInformer)
}
