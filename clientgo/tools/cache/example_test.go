package cache_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
)

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// The drop-in takes client-go's options and returns client-go's interface.
func ExampleNewDeltaFIFOWithOptions() {
	q := lwcache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: true})
	defer q.Close()

	_ = q.Add(pod("a", "1"))
	_ = q.Replace([]any{}, "2")

	_, _ = q.Pop(func(item any, _ bool) error {
		for _, d := range item.(cache.Deltas) {
			if t, ok := d.Object.(cache.DeletedFinalStateUnknown); ok {
				fmt.Println(d.Type, "tombstone for", t.Key)
				continue
			}
			fmt.Println(d.Type, d.Object.(*corev1.Pod).Name)
		}
		return nil
	})
	// Output:
	// Added a
	// Deleted tombstone for default/a
}
