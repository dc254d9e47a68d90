package reflector

import (
	"context"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// FromListerWatcher adapts any client-go ListerWatcher (with or without
// context) into a source for Options.Source. A lister-watcher that declares
// it does not support streaming lists keeps saying so.
func FromListerWatcher(lw cache.ListerWatcher) cache.ListerWatcherWithContext {
	return &adaptedSource{
		ListerWatcherWithContext: cache.ToListerWatcherWithContext(lw),
		noWatchList:              watchlist.DoesClientNotSupportWatchListSemantics(lw),
	}
}

type adaptedSource struct {
	cache.ListerWatcherWithContext
	noWatchList bool // the wrapped lister-watcher rejects streaming lists
}

// IsWatchListSemanticsUnSupported implements client-go's optional interface.
func (a *adaptedSource) IsWatchListSemanticsUnSupported() bool { return a.noWatchList }

// Unwrap returns the lister-watcher a adapts, for optional interfaces of
// it that the adapter does not have (an informer looks for a
// shard.Source's through it).
func (a *adaptedSource) Unwrap() any { return a.ListerWatcherWithContext }

// Client is any typed client with List and Watch, such as
// clientset.CoreV1().Pods(namespace); L is its list type (*corev1.PodList).
type Client[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// FromClient adapts a typed client into a source for Options.Source:
//
//	src := reflector.FromClient[*corev1.PodList](clientset.CoreV1().Pods(ns))
//
// A typed client of client-go's fake clientset (or of any client-gen
// generated fake) declares that it cannot serve streaming lists, as the
// fake clientset itself does to client-go's informers: the source then
// lists and watches. Without it, an informer over the fake waits for ever
// on a streaming list the fake never ends.
func FromClient[L runtime.Object](c Client[L]) cache.ListerWatcherWithContext {
	return clientSource[L]{c: c, noWatchList: isGeneratedFake(reflect.ValueOf(c), 4)}
}

type clientSource[L runtime.Object] struct {
	c           Client[L]
	noWatchList bool // c is a client-gen fake (isGeneratedFake)
}

// IsWatchListSemanticsUnSupported implements client-go's optional interface.
func (s clientSource[L]) IsWatchListSemanticsUnSupported() bool { return s.noWatchList }

// isGeneratedFake reports whether v is, or embeds within depth levels (a
// test's wrapper of a fake, say), one of k8s.io/client-go/gentype's fake
// clients, which every client-gen generated fake typed client embeds.
func isGeneratedFake(v reflect.Value, depth int) bool {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || depth == 0 {
		return false
	}
	t := v.Type()
	if t.PkgPath() == "k8s.io/client-go/gentype" && strings.HasPrefix(t.Name(), "FakeClient") {
		return true
	}
	for i := range t.NumField() {
		if t.Field(i).Anonymous && isGeneratedFake(v.Field(i), depth-1) {
			return true
		}
	}
	return false
}

func (s clientSource[L]) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l, err := s.c.List(ctx, opts)
	if err != nil {
		return nil, err // never a typed nil inside a non-nil interface
	}
	return l, nil
}

func (s clientSource[L]) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.c.Watch(ctx, opts)
}
