package cache

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// Objects added to an informer's indexer by hand before it starts, as
// kube-controller-manager's tests add them, give way to the first list as
// in client-go: the listed object replaces the hand-added one even when
// neither has a resource version (client-go's fake clientset sets none),
// a hand-added object the list lacks goes, and an add of something that is
// not an object (a **v1.Node) is refused. (One difference is kept: a
// hand-added object with the listed one's resource version, not empty, is
// kept, as the informer keeps every unchanged object across a relist.) kube-controller-manager's
// attachdetach test saw its hand-added node instead of the listed one.
func TestHandAddedObjectsGiveWayToTheListAsClientGo(t *testing.T) {
	listed := func() runtime.Object {
		return &corev1.ConfigMapList{Items: []corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Data: map[string]string{"from": "list"}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", ResourceVersion: "5"}, Data: map[string]string{"from": "list"}},
		}}
	}
	contents := func(t *testing.T, inf cache.SharedIndexInformer) string {
		t.Helper()
		hand := []*corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Data: map[string]string{"from": "hand"}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", ResourceVersion: "4"}, Data: map[string]string{"from": "hand"}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone"}},
		}
		for _, cm := range hand {
			if err := inf.GetIndexer().Add(cm); err != nil {
				t.Fatal(err)
			}
		}
		if err := inf.GetIndexer().Add(&hand[0]); err == nil {
			t.Fatal("the indexer took a **v1.ConfigMap")
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go inf.RunWithContext(ctx)
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("not synced")
		}
		out := ""
		for _, k := range []string{"ns/a", "ns/b", "ns/gone"} {
			obj, ok, err := inf.GetIndexer().GetByKey(k)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				out += k + ":absent "
				continue
			}
			out += fmt.Sprintf("%s:%s ", k, obj.(*corev1.ConfigMap).Data["from"])
		}
		return out
	}
	lw := func() *cache.ListWatch {
		return &cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return listed(), nil },
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return watch.NewFake(), nil
			},
		}
	}
	want := contents(t, cache.NewSharedIndexInformer(objects.NoWatchList(lw()), &corev1.ConfigMap{}, time.Hour, nil))
	got := contents(t, NewSharedIndexInformer(objects.NoWatchList(lw()), &corev1.ConfigMap{}, time.Hour, nil))
	if got != want {
		t.Fatalf("the drop-in holds %s; client-go's informer %s", got, want)
	}
}
