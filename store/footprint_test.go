package store_test

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/store"
)

func footprintPod(i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: fmt.Sprintf("pod-%06d", i), ResourceVersion: fmt.Sprint(i),
			Labels:      map[string]string{"app": fmt.Sprintf("app-%d", i%10), "tier": fmt.Sprintf("tier-%d", i)},
			Annotations: map[string]string{"note": fmt.Sprintf("%0200d", i)},
		},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i), Containers: []corev1.Container{
			{Name: fmt.Sprintf("c-%d", i), Image: fmt.Sprintf("registry.example/img:%d", i),
				Env: []corev1.EnvVar{{Name: fmt.Sprintf("K%d", i), Value: fmt.Sprintf("v%d", i)}}},
		}},
	}
}

// The estimate is within a factor of 1.25 of what the heap grows by when
// the same objects are cached (objects built with distinct strings, so
// nothing is shared), and it is zero for an empty store.
func TestFootprintIsCloseToTheHeap(t *testing.T) {
	s := newPodStore(t)
	if fp := s.Reader().Footprint(0); fp != (store.Footprint{}) {
		t.Fatalf("empty store: %+v", fp)
	}
	const n = 20000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		if err := s.Upsert(footprintPod(i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	fp := s.Reader().Footprint(0)
	if fp.Objects != n || fp.Sampled != 64 {
		t.Fatalf("footprint %+v, want %d objects and 64 sampled", fp, n)
	}
	ratio := float64(fp.Bytes) / float64(heap)
	t.Logf("estimate %d B (%d B/object), heap grew %d B (%d B/object): %.2fx", fp.Bytes, fp.BytesPerObject, heap, heap/n, ratio)
	if ratio < 1/1.25 || ratio > 1.25 {
		t.Fatalf("estimate %.2fx the heap growth", ratio)
	}
	runtime.KeepAlive(s)
}

// A cache that interns is counted as it holds: strings and label maps
// shared by many objects (as restsource's Interner shares them) count
// once, not once per object, so the estimate stays within 15% of the
// heap growth.
func TestFootprintCountsSharedAllocationsOnce(t *testing.T) {
	const n, kinds = 20000, 10
	table := make([]string, kinds)
	labelSets := make([]map[string]string, kinds)
	for k := range kinds {
		table[k] = fmt.Sprintf("registry.example/a-long-shared-image-name-%d:v1.2.3", k)
		labelSets[k] = map[string]string{"app": fmt.Sprint("app-", k), "tier": "backend", "team": fmt.Sprint("team-", k)}
	}
	s := newPodStore(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: table[i%kinds], Name: fmt.Sprintf("pod-%06d", i), ResourceVersion: fmt.Sprint(i),
				Labels: labelSets[i%kinds],
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: table[(i+1)%kinds], Image: table[i%kinds]}}},
		}
		if err := s.Upsert(p); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	fp := s.Reader().Footprint(0)
	ratio := float64(fp.Bytes) / float64(heap)
	t.Logf("estimate %d B (%d B/object), heap grew %d B (%d B/object): %.2fx", fp.Bytes, fp.BytesPerObject, heap, heap/n, ratio)
	if ratio < 0.85 || ratio > 1.15 {
		t.Fatalf("estimate %.2fx the heap growth", ratio)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(table)
}
