package cache

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer/informertest"
)

// TestGenerateNameOnFakeClientset: client-go's fake clientset does not
// fill in a name from generateName, so a pod a controller creates that way
// reaches the informer without a name. client-go's informer keys it
// "default/" and caches it (and a second one replaces the first under the
// same key); the drop-in must do the same, or a controller waiting for its
// pod in unit tests waits for ever.
func TestGenerateNameOnFakeClientset(t *testing.T) {
	transcripts := map[string][]string{}
	for _, im := range siiImpls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				cs := k8sfake.NewClientset()
				// As client-go's generated informers build it: the fake
				// clientset has no streaming lists.
				lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
					ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
						return cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
					},
					WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
						return cs.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
					},
				}, cs)
				inf := im.new(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
				h := &informertest.ClientGoRecorder{}
				if _, err := inf.AddEventHandler(h); err != nil {
					t.Fatal(err)
				}
				runSII(t, inf)
				var out []string
				log := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

				web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "web-"}}
				if _, err := cs.CoreV1().Pods("default").Create(ctx, web, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				log("events %q", h.Take())
				log("keys %q", sortedKeys(inf.GetIndexer()))
				got, ok, err := inf.GetIndexer().GetByKey("default/")
				log("get default/: %v %v %v", ok, err, got != nil && got.(*corev1.Pod).GenerateName == "web-")
				byNS, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, "default")
				log("namespace index: %d %v", len(byNS), err)

				// The indexer takes a nameless object written to it, as
				// client-go's does, and a cluster-scoped one under "".
				err = inf.GetIndexer().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", GenerateName: "db-"}})
				log("add other/: %v", err)
				err = inf.GetIndexer().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "cluster-"}})
				log("add cluster-scoped: %v keys %q", err, sortedKeys(inf.GetIndexer()))
				_, ok, _ = inf.GetIndexer().GetByKey("")
				log("get \"\": %v", ok)
				if err := inf.GetIndexer().Delete(&corev1.Pod{}); err != nil {
					t.Fatal(err)
				}

				if err := cs.CoreV1().Pods("default").Delete(ctx, "", metav1.DeleteOptions{}); err != nil {
					log("delete by the empty name: %v", err)
				}
				synctest.Wait()
				log("events %q keys %q", h.Take(), sortedKeys(inf.GetIndexer()))
				transcripts[im.name] = out
			})
		})
	}
	sameTranscripts(t, transcripts)
}

func sortedKeys(idx cache.Indexer) []string {
	keys := idx.ListKeys()
	slices.Sort(keys)
	return keys
}
