package shard_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/shard"
)

// createPods creates n pods, p0000 and on, in namespace default on srv.
func createPods(ctx context.Context, t *testing.T, srv *fake.Server, n int) []*corev1.Pod {
	t.Helper()
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		p, err := srv.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p%04d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p.(*corev1.Pod))
	}
	return pods
}

// cachedNames are the names of the pods inf caches, sorted.
func cachedNames(inf *informer.Informer[*corev1.Pod]) []string {
	var out []string
	for _, p := range inf.Reader().List() {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// ownedBy returns the names of the pods member owns under a, in the pods'
// order (createPods makes them in name order).
func ownedBy(pods []*corev1.Pod, a *shard.Assignment, member string) []string {
	var out []string
	for _, p := range pods {
		if a.OwnerOfKey(string(p.UID)) == member {
			out = append(out, p.Name)
		}
	}
	return out
}
