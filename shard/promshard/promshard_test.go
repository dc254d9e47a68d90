package promshard_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/shard/promshard"
)

// TestCollector scrapes a running member and a source that filtered a
// list on the client (the fake clientset ignores shard selectors).
func TestCollector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset()
		for _, name := range []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"} {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: uuid.NewUUID()}}
			if _, err := cs.CoreV1().Pods("default").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		src, err := shard.NewSource(ctx, shard.SourceOptions{Inner: reflector.FromClient(cs.CoreV1().Pods(""))})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		m, err := shard.NewMember(ctx, shard.MemberOptions{Client: cs, Namespace: "ring", Ring: "pods", Identity: "a",
			Slices: 8, Clock: clocktesting.NewFakeClock(t0), JoinWindow: -1, OnChange: src.OnChange})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		synctest.Wait()
		// b joins: a owns part of the slices; a's list drops b's pods.
		b := shard.MustAssign([]string{"a", "b"}, shard.Options{Slices: 8})
		src.Update(shard.Change{Member: "a", Assignment: b})
		if _, err := src.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		st := src.Stats()
		c := promshard.New()
		c.AddMember(m)
		c.AddSource("pods", src)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		series := 0
		for _, mf := range mfs {
			for _, mt := range mf.GetMetric() {
				series++
				v := mt.GetGauge().GetValue() + mt.GetCounter().GetValue()
				got[mf.GetName()] = v
			}
		}
		want := map[string]float64{
			"shard_ring_members": 1, "shard_owned_slices": 8, "shard_withheld_slices": 0, "shard_ring_agreed": 1,
			"shard_ring_synced": 1, "shard_conflicting_members": 0, "shard_lease_renew_failing": 0,
			"shard_lease_renewed_timestamp_seconds": float64(t0.Unix()),
			"shard_source_lists_total":              1, "shard_source_server_filtered_lists_total": 0,
			"shard_source_dropped_objects_total": float64(st.DroppedObjects), "shard_source_dropped_events_total": 0,
			"shard_source_reassignments_total": 2, "shard_source_local_relists_total": 0, "shard_source_confirm_lists_total": 0,
			"shard_source_handover_deletions_total": 0,
		}
		for name, v := range want {
			if g, ok := got[name]; !ok || g != v {
				t.Errorf("%s = %v (exported %v), want %v", name, g, ok, v)
			}
		}
		if series != len(want) {
			t.Errorf("%d series, want %d", series, len(want))
		}
		if st.DroppedObjects == 0 || st.DroppedObjects == 8 {
			t.Errorf("the client filter dropped %d of 8 pods", st.DroppedObjects)
		}
		for _, mf := range mfs {
			if l := mf.GetMetric()[0].GetLabel(); mf.GetName() == "shard_owned_slices" &&
				(len(l) != 2 || l[0].GetValue() != "a" || l[1].GetValue() != "pods") {
				t.Errorf("labels %v", l)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
