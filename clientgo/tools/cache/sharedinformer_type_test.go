package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
)

// intruder rewrites the watch event of the object named "intruder" with
// swap: into an object of the wrong type or kind.
type intruder struct {
	*fake.ListerWatcher
	swap func(runtime.Object) runtime.Object
}

func (i intruder) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := i.ListerWatcher.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if m, err := meta.Accessor(ev.Object); err == nil && m.GetName() == "intruder" {
			ev.Object = i.swap(ev.Object)
		}
		return ev, true
	}), nil
}

func (i intruder) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return i.WatchWithContext(context.Background(), opts)
}

// asPod turns a ConfigMap into a Pod of the same name and version.
func asPod(o runtime.Object) runtime.Object {
	return &corev1.Pod{ObjectMeta: *o.(*corev1.ConfigMap).ObjectMeta.DeepCopy()}
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
				srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
				inf := im.new(intruder{srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), asPod}, &corev1.ConfigMap{}, 0, nil)
				h := &informertest.ClientGoRecorder{}
				inf.AddEventHandler(h)
				runSII(t, inf)
				srv.Create(t.Context(), objects.ConfigMap("ns", "intruder", objects.Data("v", "0")))
				synctest.Wait()
				if li, ok := inf.(*listwatchInformer); ok {
					// The foreign object's resource version does not count.
					done, cancel := context.WithCancel(t.Context())
					cancel()
					if li.inf.WaitForResourceVersion(done, "2") == nil {
						t.Fatal("the dropped Pod's resource version moved the informer's watermark")
					}
				}
				srv.Create(t.Context(), objects.ConfigMap("ns", "b", objects.Data("v", "0")))
				synctest.Wait()
				var keys []string
				for _, o := range inf.GetStore().List() {
					m, err := meta.Accessor(o)
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, fmt.Sprintf("%T %s@%s", o, m.GetName(), m.GetResourceVersion()))
				}
				slices.Sort(keys)
				transcripts[im.name] = append(h.Take(), keys...)
				if im.name == "listwatch" {
					li := inf.(*listwatchInformer).inf
					var de *informer.DropError
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

// With an unstructured example object that names a kind, an object of
// another kind on the watch is dropped, as by client-go.
func TestCompatUnstructuredDropsOtherKinds(t *testing.T) {
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	asSecret := func(o runtime.Object) runtime.Object {
		u := o.(*unstructured.Unstructured).DeepCopy()
		u.SetKind("Secret")
		return u
	}
	transcripts := map[string][]string{}
	for _, im := range siiImpls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res := fake.ConfigMaps()
				res.Unstructured = true
				srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{res}})
				example := &unstructured.Unstructured{}
				example.SetAPIVersion("v1")
				example.SetKind("ConfigMap")
				srv.Create(t.Context(), unstructuredCM("a"))
				inf := im.new(intruder{srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), asSecret}, example, 0, nil)
				h := &informertest.ClientGoRecorder{}
				inf.AddEventHandler(h)
				runSII(t, inf)
				srv.Create(t.Context(), unstructuredCM("intruder"))
				srv.Create(t.Context(), unstructuredCM("b"))
				synctest.Wait()
				keys := inf.GetStore().ListKeys()
				slices.Sort(keys)
				transcripts[im.name] = append(h.Take(), fmt.Sprint(keys))
			})
		})
	}
	want := []string{"add a@1 initial=true", "add b@3 initial=false", "[ns/a ns/b]"}
	for name, got := range transcripts {
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

func unstructuredCM(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName(name)
	return u
}
