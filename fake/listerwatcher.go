package fake

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ListerWatcher lists and watches one resource (optionally one namespace)
// of a Server. It implements cache.ListerWatcherWithContext and
// cache.ListerWatcher, so client-go reflectors and informers accept it, and
// it supports watch-list (streaming) requests.
type ListerWatcher struct {
	// srv and opts are immutable.
	srv  *Server
	opts LWOptions
}

var (
	_ cache.ListerWatcher            = (*ListerWatcher)(nil)
	_ cache.ListerWatcherWithContext = (*ListerWatcher)(nil)
)

// ListerWatcher returns a lister-watcher for o.Resource in o.Namespace. An
// unserved resource is not an error here: its calls get 404, as from a real
// apiserver.
func (s *Server) ListerWatcher(o LWOptions) *ListerWatcher {
	return &ListerWatcher{srv: s, opts: o}
}

// ListWithContext lists like kube-apiserver: a *corev1.PodList (or the
// resource's typed list), or an *unstructured.UnstructuredList.
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return lw.srv.list(ctx, lw.opts.Resource, lw.opts.Namespace, lw.opts.apply(opts))
}

// WatchWithContext opens a watch; cancelling ctx ends it.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return lw.srv.watch(ctx, lw.opts.Resource, lw.opts.Namespace, lw.opts.apply(opts))
}

// List is ListWithContext with a background context.
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext with a background context.
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}
