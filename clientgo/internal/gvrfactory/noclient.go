package gvrfactory

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ErrNoClient is what every list and watch of a [NoClient] informer
// returns.
var ErrNoClient = errors.New("the informer factory was given no client (nil): it cannot list or watch")

// NoClient is the ListerWatcher of an informer whose factory was given a
// nil client, or a nil pointer. client-go builds such informers (tests ask
// a factory made with a nil clientset for informers they never start) and
// fails only once one lists, by a nil dereference; listwatch builds them
// too, and each list and watch fails with [ErrNoClient] instead, which the
// reflector logs, counts and backs off from, and the informer never syncs.
func NoClient() cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, ErrNoClient
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, ErrNoClient
		},
	}
}
