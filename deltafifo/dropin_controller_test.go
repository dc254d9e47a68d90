package deltafifo

import (
	"context"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// TestDropInDrivesClientGoController runs client-go's own controller
// (reflector + process loop) on top of the drop-in and checks the processed
// deltas, the indexer contents and HasSynced.
func TestDropInDrivesClientGoController(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fw := watch.NewFake()
		// The source says it cannot do WatchList, so that client-go's
		// reflector lists and then watches.
		lw := objects.NoWatchList(&cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"},
					Items: []corev1.Pod{*objects.Pod("ns", "a", objects.RV("1")), *objects.Pod("ns", "b", objects.RV("1"))}}, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return fw, nil
			},
		})
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		q := newDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KnownObjects: indexer, EmitDeltaTypeReplaced: true})
		var seen []string
		process := func(item any, _ bool) error {
			for _, d := range item.(cache.Deltas) {
				p := d.Object.(*corev1.Pod)
				seen = append(seen, string(d.Type)+" "+p.Name+"@"+p.ResourceVersion)
				if d.Type == cache.Deleted {
					mustOK(t, indexer.Delete(p))
				} else {
					mustOK(t, indexer.Update(p))
				}
			}
			return nil
		}
		ctrl := cache.New(&cache.Config{Queue: q, ListerWatcher: lw, ObjectType: &corev1.Pod{}, Process: process})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			ctrl.RunWithContext(ctx)
		}()
		synctest.Wait()
		if !ctrl.HasSynced() {
			t.Fatal("controller not synced after the initial list was processed")
		}
		fw.Modify(objects.Pod("ns", "a", objects.RV("2")))
		fw.Delete(objects.Pod("ns", "b", objects.RV("3")))
		synctest.Wait()
		cancel()
		<-done
		wantLines(t, seen, "Replaced a@1", "Replaced b@1", "Updated a@2", "Deleted b@3")
		if keys := indexer.ListKeys(); len(keys) != 1 || keys[0] != "ns/a" {
			t.Fatalf("indexer keys = %v, want [ns/a]", keys)
		}
	})
}
