package store_test

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/store"
)

func pod(ns, name, node string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

func Example() {
	s, err := store.New(store.Options[*corev1.Pod]{
		Indexers: store.Indexers[*corev1.Pod]{
			"node": func(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil },
		},
	})
	if err != nil {
		panic(err)
	}
	// The informer owns the writer.
	_ = s.Upsert(pod("default", "web-1", "node-a", map[string]string{"app": "web"}))
	_ = s.Upsert(pod("default", "db-1", "node-b", map[string]string{"app": "db"}))
	_ = s.Upsert(pod("kube-system", "dns-1", "node-a", nil))

	// Everyone else gets a read-only view.
	r := s.Reader()
	web := r.Namespace("default").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	onA, _ := r.ByIndex("node", "node-a")
	fmt.Println("web:", names(web))
	fmt.Println("on node-a:", names(onA))

	// A relist: db-1 is gone, web-1 stays.
	_ = s.Replace([]*corev1.Pod{pod("default", "web-1", "node-a", nil)}, "42")
	fmt.Println("after relist:", r.ListKeys(), r.LastSyncResourceVersion())
	// Output:
	// web: [default/web-1]
	// on node-a: [default/web-1 kube-system/dns-1]
	// after relist: [default/web-1] 42
}

// A reflector applies a paginated relist page by page; Commit then deletes
// what the list no longer contains.
func ExampleStore_BeginReplace() {
	s, _ := store.New(store.Options[*corev1.Pod]{})
	for _, name := range []string{"a", "b", "c"} {
		_ = s.Upsert(pod("default", name, "", nil))
	}
	pages := [][]*corev1.Pod{
		{pod("default", "a", "", nil)},
		{pod("default", "c", "", nil), pod("default", "d", "", nil)},
	}
	sess := s.BeginReplace()
	for _, page := range pages {
		for _, p := range page {
			if err := sess.Upsert(p); err != nil {
				sess.Abort()
				return
			}
		}
	}
	deleted, _ := sess.Commit("100")
	keys := s.ListKeys()
	slices.Sort(keys)
	fmt.Println(keys, "deleted:", deleted)
	// Output:
	// [default/a default/c default/d] deleted: 1
}

// A reconciler that only ranges over an index value reads it with
// ByIndexSeq: a large value is iterated from the store's snapshot, without
// the copy ByIndex makes.
func ExampleReader_ByIndexSeq() {
	s, err := store.New(store.Options[*corev1.Pod]{
		Indexers: store.Indexers[*corev1.Pod]{
			"node": func(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil },
		},
	})
	if err != nil {
		panic(err)
	}
	for i := range 100 {
		_ = s.Upsert(pod("default", fmt.Sprintf("web-%02d", i), "node-a", map[string]string{"app": "web"}))
	}
	_ = s.Upsert(pod("default", "db-1", "node-b", map[string]string{"app": "db"}))

	onA, err := s.Reader().ByIndexSeq("node", "node-a")
	if err != nil {
		panic(err)
	}
	web := 0
	for p := range onA {
		if p.Labels["app"] == "web" {
			web++
		}
	}
	fmt.Println("web pods on node-a:", web)
	// Output:
	// web pods on node-a: 100
}
