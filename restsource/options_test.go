package restsource_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/restsource"
)

// optionsSource is srv's source with the memory options set on top of the
// usual ones.
func optionsSource(t *testing.T, srv *server, ct string, workers int, opts restsource.Options) *restsource.Source[*corev1.Pod, corev1.Pod] {
	t.Helper()
	opts.Client, opts.Resource, opts.ContentType, opts.DecodeWorkers = srv.clientset(t, ct).CoreV1().RESTClient(), "pods", ct, workers
	src, err := restsource.New[*corev1.Pod](opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// stripped returns pods without their managedFields.
func stripped(objs ...*corev1.Pod) []*corev1.Pod {
	for _, o := range objs {
		o.ManagedFields = nil
	}
	return objs
}

// TestMemoryOptionsEndToEnd: with StripManagedFields (and an Interner), lists
// and watches deliver exactly client-go's objects with ManagedFields set
// to nil, in both encodings, inline and with workers.
func TestMemoryOptionsEndToEnd(t *testing.T) {
	for _, ct := range contentTypes {
		srv := podsServer(t, ct, 40)
		cs := srv.clientset(t, ct)
		wantList, err := cs.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var want []*corev1.Pod
		for i := range wantList.Items {
			want = append(want, &wantList.Items[i])
		}
		want = stripped(want...)
		cw, err := cs.CoreV1().Pods("").Watch(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantEvents := drain(t, cw)
		for _, ev := range wantEvents {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				stripped(p)
			}
		}
		for _, c := range []struct {
			workers int
			opts    restsource.Options
		}{
			{1, restsource.Options{StripManagedFields: true}},
			{3, restsource.Options{StripManagedFields: true}},
			{3, restsource.Options{StripManagedFields: true, Interner: restsource.NewInterner(64)}},
		} {
			src := optionsSource(t, srv, ct, c.workers, c.opts)
			got, err := src.ListWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var items []*corev1.Pod
			for _, it := range got.(*metav1.List).Items {
				items = append(items, it.Object.(*corev1.Pod))
			}
			equal(t, ct+" items", items, want)
			w, err := src.WatchWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			events := drain(t, w)
			w.Stop()
			equal(t, ct+" events", events, wantEvents)
			if events[0].Type != watch.Added || len(events[0].Object.(*corev1.Pod).Labels) == 0 {
				t.Fatalf("%s: first event %v", ct, events[0])
			}
		}
	}
}
