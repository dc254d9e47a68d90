package deltafifo

import (
	"testing"
)

func TestCoalescingAccumulatesPerKeyInArrivalOrder(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	mustOK(t, f.Add(mk("ns", "a", 1)))
	mustOK(t, f.Add(mk("ns", "b", 2)))
	mustOK(t, f.Update(mk("ns", "a", 3)))
	mustOK(t, f.Delete(mk("ns", "a", 4)))
	mustOK(t, f.Add(mk("", "c", 5)))
	if got := f.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3 keys", got)
	}
	wantLines(t, popAll(t, f, nil),
		"ns/a: Added:ns/a@1 Updated:ns/a@3 Deleted:ns/a@4",
		"ns/b: Added:ns/b@2",
		"c: Added:c@5",
	)
}

func TestCoalescingCollapsesConsecutiveDeletions(t *testing.T) {
	k := newKnown(mk("ns", "gone", 1))
	f := newFIFO(t, Options[obj]{KnownObjects: k})
	// A real deletion followed by another: the older one is kept.
	mustOK(t, f.Add(mk("ns", "a", 1)))
	mustOK(t, f.Delete(mk("ns", "a", 2)))
	mustOK(t, f.Delete(mk("ns", "a", 3)))
	// A deletion inferred by Replace is superseded by a real one.
	mustOK(t, f.Replace(nil, "10"))
	mustOK(t, f.Delete(mk("ns", "gone", 11)))
	wantLines(t, popAll(t, f, k),
		"ns/a: Added:ns/a@1 Deleted:ns/a@2",
		"ns/gone: Deleted:ns/gone@11",
	)
}

func TestCoalescingDeleteOfUnknownKeyIsDropped(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	mustOK(t, f.Delete(mk("ns", "a", 1)))
	if f.Len() != 0 {
		t.Fatalf("deletion of a key nobody holds was queued")
	}
	k := newKnown(mk("ns", "a", 1))
	g := newFIFO(t, Options[obj]{KnownObjects: k})
	mustOK(t, g.Delete(mk("ns", "a", 2)))
	mustOK(t, g.Delete(mk("ns", "b", 2)))
	wantLines(t, popAll(t, g, k), "ns/a: Deleted:ns/a@2")
}

func TestCoalescingReplaceQueuesReplacedAndUnknownDeletions(t *testing.T) {
	k := newKnown(mk("ns", "known-kept", 1), mk("ns", "known-gone", 2))
	f := newFIFO(t, Options[obj]{KnownObjects: k})
	mustOK(t, f.Add(mk("ns", "queued-gone", 3)))
	mustOK(t, f.Add(mk("ns", "queued-kept", 4)))
	mustOK(t, f.Replace([]obj{mk("ns", "queued-kept", 10), mk("ns", "known-kept", 10), mk("ns", "new", 10)}, "10"))
	wantLines(t, popAll(t, f, k),
		"ns/queued-gone: Added:ns/queued-gone@3 Deleted?:ns/queued-gone@3",
		"ns/queued-kept: Added:ns/queued-kept@4 Replaced:ns/queued-kept@10",
		"ns/known-kept: Replaced:ns/known-kept@10",
		"ns/new: Replaced:ns/new@10",
		"ns/known-gone: Deleted?:ns/known-gone@2",
	)
}

func TestCoalescingReplaceDeletionWithoutKnownObject(t *testing.T) {
	k := &vanishing{known: newKnown(mk("ns", "ghost", 1))}
	f := newFIFO(t, Options[obj]{KnownObjects: k})
	mustOK(t, f.Replace(nil, "1"))
	wantLines(t, popAll(t, f, nil), "ns/ghost: Deleted?:<nil>")
}

// vanishing lists its keys but no longer finds them.
type vanishing struct{ *known }

func (v *vanishing) GetByKey(string) (obj, bool) { return nil, false }

func TestCoalescingResyncQueuesSyncForUnqueuedKnownObjects(t *testing.T) {
	k := newKnown(mk("ns", "a", 1), mk("ns", "b", 2))
	f := newFIFO(t, Options[obj]{KnownObjects: k})
	mustOK(t, f.Update(mk("ns", "a", 3)))
	mustOK(t, f.Resync())
	wantLines(t, popAll(t, f, k),
		"ns/a: Updated:ns/a@3",
		"ns/b: Sync:ns/b@2",
	)
	// Without known objects Resync does nothing.
	g := newFIFO(t, Options[obj]{})
	mustOK(t, g.Resync())
	if g.Len() != 0 {
		t.Fatal("Resync without KnownObjects queued something")
	}
}

func TestTransformAppliesOnEntryButNotToSyncOrInferredDeletions(t *testing.T) {
	k := newKnown(mk("ns", "k", 1))
	calls := 0
	transform := func(o obj) (obj, error) {
		calls++
		c := o.DeepCopy()
		c.ResourceVersion += "t"
		return c, nil
	}
	f := newFIFO(t, Options[obj]{KnownObjects: k, Transform: transform})
	mustOK(t, f.Add(mk("ns", "a", 1)))
	mustOK(t, f.Update(mk("ns", "a", 2)))
	mustOK(t, f.Delete(mk("ns", "a", 3)))
	mustOK(t, f.Resync())
	wantLines(t, popAll(t, f, k),
		"ns/a: Added:ns/a@1t Updated:ns/a@2t Deleted:ns/a@3t",
		"ns/k: Sync:ns/k@1",
	)
	mustOK(t, f.Add(mk("ns", "q", 4)))
	mustOK(t, f.Replace([]obj{mk("ns", "r", 5)}, "5"))
	wantLines(t, popAll(t, f, k),
		"ns/q: Added:ns/q@4t Deleted?:ns/q@4t",
		"ns/r: Replaced:ns/r@5t",
		"ns/k: Deleted?:ns/k@1",
	)
	if calls != 5 {
		t.Fatalf("transform ran %d times, want 5", calls)
	}
}

func TestCoalescingPopBatchHandsSeveralKeys(t *testing.T) {
	f := newFIFO(t, Options[obj]{MaxBatch: 2})
	mustOK(t, f.Add(mk("ns", "a", 1)))
	mustOK(t, f.Add(mk("ns", "b", 2)))
	mustOK(t, f.Update(mk("ns", "a", 3)))
	mustOK(t, f.Add(mk("ns", "c", 4)))
	var got []string
	batch := func(items []Item[obj], _ bool) error {
		line := ""
		for _, it := range items {
			line += "[" + it.Key + ": " + fmtDeltas(it.Deltas) + "]"
		}
		got = append(got, line)
		return nil
	}
	for f.Len() > 0 {
		mustOK(t, f.PopBatch(t.Context(), batch))
	}
	wantLines(t, got,
		"[ns/a: Added:ns/a@1 Updated:ns/a@3][ns/b: Added:ns/b@2]",
		"[ns/c: Added:ns/c@4]",
	)
}
