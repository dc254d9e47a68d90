package deltafifo

import (
	"errors"
	"testing"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func cacheKeys(ds []cache.Delta) string {
	s := ""
	for _, d := range ds {
		key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(d.Object)
		s += "[" + string(d.Type) + " " + key + "]"
	}
	return s
}

func TestDropInPopBatchBatchesSingleDeltaKeys(t *testing.T) {
	q := newDeltaFIFOWithOptions(cache.DeltaFIFOOptions{}).(cache.QueueWithBatch)
	defer q.Close()
	mustOK(t, q.Add(mk("ns", "a", 1)))
	mustOK(t, q.Add(mk("ns", "b", 2)))
	mustOK(t, q.Update(mk("ns", "a", 3)))
	mustOK(t, q.Add(mk("ns", "c", 4)))
	mustOK(t, q.Add(mk("ns", "d", 5)))
	mustOK(t, q.Add(mk("ns", "e", 6)))
	mustOK(t, q.Update(mk("ns", "e", 7)))
	var got []string
	batch := func(ds []cache.Delta, _ bool) error {
		got = append(got, "batch "+cacheKeys(ds))
		return nil
	}
	single := func(item any, _ bool) error {
		got = append(got, "single "+cacheKeys(item.(cache.Deltas)))
		return nil
	}
	for range 3 {
		mustOK(t, q.PopBatch(batch, single))
	}
	wantLines(t, got,
		"single [Added ns/a][Updated ns/a]",
		"batch [Added ns/b][Added ns/c][Added ns/d]",
		"single [Added ns/e][Updated ns/e]",
	)
	q.Close()
	if err := q.PopBatch(batch, single); !errors.Is(err, cache.ErrFIFOClosed) {
		t.Fatalf("PopBatch after Close = %v, want cache.ErrFIFOClosed", err)
	}
	if _, err := q.Pop(single); !errors.Is(err, cache.ErrFIFOClosed) {
		t.Fatalf("Pop after Close = %v, want cache.ErrFIFOClosed", err)
	}
}

func TestDropInPopBatchStopsAtInitialListEnd(t *testing.T) {
	q := newDeltaFIFOWithOptions(cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: true}).(cache.QueueWithBatch)
	defer q.Close()
	mustOK(t, q.Replace([]any{mk("ns", "a", 1), mk("ns", "b", 1)}, "1"))
	mustOK(t, q.Add(mk("ns", "c", 2)))
	var got []string
	var initial []bool
	batch := func(ds []cache.Delta, isInitial bool) error {
		got = append(got, "batch "+cacheKeys(ds))
		initial = append(initial, isInitial)
		return nil
	}
	single := func(item any, isInitial bool) error {
		got = append(got, "single "+cacheKeys(item.(cache.Deltas)))
		initial = append(initial, isInitial)
		return nil
	}
	mustOK(t, q.PopBatch(batch, single))
	if !q.HasSynced() || !cache.IsDone(q.HasSyncedChecker()) {
		t.Fatal("not synced after the initial batch")
	}
	mustOK(t, q.PopBatch(batch, single))
	wantLines(t, got, "batch [Replaced ns/a][Replaced ns/b]", "single [Added ns/c]")
	if !equalBools(initial, []bool{true, false}) {
		t.Fatalf("isInInitialList = %v", initial)
	}
}

func TestDropInAccessors(t *testing.T) {
	logger := klog.Background()
	q := newDeltaFIFOWithOptions(cache.DeltaFIFOOptions{Name: "pods", Logger: &logger, Transformer: cacheTransform})
	ts, ok := q.(cache.TransformingStore)
	if !ok || ts.Transformer() == nil {
		t.Fatal("drop-in does not expose its transformer")
	}
	if name := q.HasSyncedChecker().Name(); name != "pods" {
		t.Fatalf("Name = %q", name)
	}
	if q.(*DropIn).IsClosed() {
		t.Fatal("closed at birth")
	}
	q.Close()
	if !q.(*DropIn).IsClosed() {
		t.Fatal("IsClosed false after Close")
	}
	// Like client-go, the drop-in accepts writes after Close; Pop drains them.
	mustOK(t, q.Add(mk("ns", "a", 1)))
	item, err := q.Pop(func(any, bool) error { return nil })
	mustOK(t, err)
	if got := item.(cache.Deltas)[0].Object.(obj).Labels["transformed"]; got != "yes" {
		t.Fatal("transformer not applied")
	}
}
