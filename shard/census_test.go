package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestCensus(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	ptrs := make([]*corev1.Pod, 3000)
	for i := range ptrs {
		ptrs[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p%d", i), UID: types.UID(randomUID(r))}}
	}
	pods := ptrs
	a := MustAssign([]string{"a", "b", "c", "idle"}, Options{Slices: 4})
	got, err := Census(ptrs, a, FieldUID)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range a.Members() {
		if n := len(ownedNames(pods, a, m)); got[m] != n {
			t.Errorf("%s: census %d, owns %d", m, got[m], n)
		}
		total += got[m]
	}
	if total != len(pods) || len(got) != 4 {
		t.Errorf("census %v", got)
	}
	perSlice, err := SliceCensus(ptrs, 4, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range a.Members() {
		n := 0
		for _, s := range a.Owned(m) {
			n += perSlice[s]
		}
		if n != got[m] {
			t.Errorf("%s: %d by slices, %d by census", m, n, got[m])
		}
	}
	empty := MustAssign(nil, Options{Slices: 4})
	if got, _ := Census(ptrs[:5], empty, ""); got[""] != 5 {
		t.Errorf("empty ring: %v", got)
	}
	if _, err := Census(ptrs, a, "metadata.name"); err == nil {
		t.Error("Census with an unsupported field")
	}
	if _, err := SliceCensus(ptrs, -1, ""); err == nil {
		t.Error("SliceCensus with -1 slices")
	}
}
