package store_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/store"
)

// TestSteadyStateAllocations pins the allocation budget of a steady-state
// update: the default key function's key string is the only allocation
// when every index is the namespace index or a ValueIndexFunc, and
// SwapKeyed removes that one too.
func TestSteadyStateAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not exact under -race")
	}
	node := func(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, true }
	s, err := store.New(store.Options[*corev1.Pod]{ValueIndexers: store.ValueIndexers[*corev1.Pod]{"node": node}})
	if err != nil {
		t.Fatal(err)
	}
	versions := []*corev1.Pod{pod("ns", "a", "n1", nil), pod("ns", "a", "n1", nil)}
	_ = s.Upsert(versions[0])
	i := 0
	next := func() *corev1.Pod { i++; return versions[i%2] }
	for _, tc := range []struct {
		name  string
		write func()
		want  float64
	}{
		{"Upsert", func() { _ = s.Upsert(next()) }, 1},
		{"SwapKeyed", func() { _, _, _ = s.SwapKeyed("ns/a", next()) }, 0},
	} {
		if got := testing.AllocsPerRun(1000, tc.write); got != tc.want {
			t.Errorf("%s: %.1f allocations per update, want %.0f", tc.name, got, tc.want)
		}
	}
}
