package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/reflector"
)

// intruder turns the watch event of the configmap named "intruder" into a
// Pod of the same name and resource version: the wrong type for an
// informer of configmaps.
type intruder struct{ *fake.ListerWatcher }

func (i intruder) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := i.ListerWatcher.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if c, ok := ev.Object.(*corev1.ConfigMap); ok && c.Name == "intruder" {
			ev.Object = &corev1.Pod{ObjectMeta: *c.ObjectMeta.DeepCopy()}
		}
		return ev, true
	}), nil
}

func (i intruder) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return i.WatchWithContext(context.Background(), opts)
}

// An object of the wrong type on the watch (a Pod on an informer whose
// example object is a ConfigMap) is dropped by the drop-in, as by
// client-go: neither cached nor handed to handlers. listwatch also counts
// it and reports it in Status.
func TestCompatDropsObjectsOfTheWrongType(t *testing.T) {
	// client-go reports the drop through HandleError, whose rate limiter
	// reads a global clock outside the bubble and then sleeps: replace it.
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	transcripts := map[string][]string{}
	for _, im := range siiImpls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := fake.NewTestServer(t, fake.Options{})
				srv.Create(t.Context(), newCM("a"))
				inf := im.new(intruder{srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})}, &corev1.ConfigMap{}, 0, nil)
				h := &untypedEvents{}
				inf.AddEventHandler(h)
				runSII(t, inf)
				srv.Create(t.Context(), newCM("intruder"))
				srv.Create(t.Context(), newCM("b"))
				synctest.Wait()
				var keys []string
				for _, o := range inf.GetStore().List() {
					keys = append(keys, fmt.Sprintf("%T %s", o, describe(o)))
				}
				slices.Sort(keys)
				transcripts[im.name] = append(h.take(), keys...)
				if im.name == "listwatch" {
					li := inf.(*compatInformer).inf
					var de *DropError
					if st := li.Status(); li.Dropped() != 1 || !errors.As(st.LastError, &de) ||
						de.Reason != reflector.ReasonUnexpectedType || de.Key != "ns/intruder" {
						t.Fatalf("Dropped %d, Status %+v: want the Pod reported", li.Dropped(), st)
					}
				}
			})
		})
	}
	want := []string{"add a@1 initial=true", "add b@3 initial=false", "*v1.ConfigMap a@1", "*v1.ConfigMap b@3"}
	for name, got := range transcripts {
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}
