package retrywatcher_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/retrywatcher"
)

// A watcher whose streams end after every event: the RetryWatcher reopens
// each time from the last RV, and the consumer sees one unbroken stream.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rw, err := retrywatcher.New(ctx, retrywatcher.Options{ResourceVersion: "1", Watcher: oneEventPerWatch{}})
	if err != nil {
		panic(err)
	}
	defer rw.Stop()
	for range 3 {
		ev := <-rw.ResultChan()
		fmt.Println(ev.Type, ev.Object.(*corev1.ConfigMap).ResourceVersion)
	}
	// Output:
	// MODIFIED 2
	// MODIFIED 3
	// MODIFIED 4
}

// oneEventPerWatch serves a watch from RV n as a single MODIFIED event at
// RV n+1, then closes the stream.
type oneEventPerWatch struct{}

func (oneEventPerWatch) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	var rv int
	fmt.Sscan(opts.ResourceVersion, &rv)
	ch := make(chan watch.Event, 1)
	ch <- watch.Event{Type: watch.Modified, Object: &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: fmt.Sprint(rv + 1)}}}
	close(ch)
	return watch.NewProxyWatcher(ch), nil
}

var _ cache.WatcherWithContext = oneEventPerWatch{}
