package deltafifo

import "testing"

func TestInOrderDeliversEveryEventInArrivalOrder(t *testing.T) {
	f := newFIFO(t, Options[obj]{InOrder: true})
	mustOK(t, f.Add(mk("ns", "a", 1)))
	mustOK(t, f.Add(mk("ns", "b", 2)))
	mustOK(t, f.Update(mk("ns", "a", 3)))
	mustOK(t, f.Delete(mk("ns", "a", 4)))
	mustOK(t, f.Delete(mk("ns", "a", 5))) // no collapsing in order mode
	mustOK(t, f.Delete(mk("ns", "z", 6))) // nor dropping of unknown keys
	if got := f.Len(); got != 6 {
		t.Fatalf("Len = %d, want 6 events", got)
	}
	wantLines(t, popAll(t, f, nil),
		"ns/a: Added:ns/a@1",
		"ns/b: Added:ns/b@2",
		"ns/a: Updated:ns/a@3",
		"ns/a: Deleted:ns/a@4",
		"ns/a: Deleted:ns/a@5",
		"ns/z: Deleted:ns/z@6",
	)
}

func TestInOrderReplaceQueuesDeletionsFirst(t *testing.T) {
	k := newKnown(mk("ns", "known-kept", 1), mk("ns", "known-gone", 2))
	f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: true})
	mustOK(t, f.Add(mk("ns", "queued-gone", 3)))
	mustOK(t, f.Add(mk("ns", "deleted", 4)))
	mustOK(t, f.Delete(mk("ns", "deleted", 5)))
	mustOK(t, f.Replace([]obj{mk("ns", "known-kept", 10), mk("ns", "new", 10)}, "10"))
	wantLines(t, popAll(t, f, nil),
		"ns/queued-gone: Added:ns/queued-gone@3",
		"ns/deleted: Added:ns/deleted@4",
		"ns/deleted: Deleted:ns/deleted@5",
		"ns/queued-gone: Deleted?:ns/queued-gone@3",
		"ns/known-gone: Deleted?:ns/known-gone@2",
		"ns/known-kept: Replaced:ns/known-kept@10",
		"ns/new: Replaced:ns/new@10",
	)
}

func TestInOrderResyncSkipsQueuedKeys(t *testing.T) {
	k := newKnown(mk("ns", "a", 1), mk("ns", "b", 2))
	f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: true})
	mustOK(t, f.Update(mk("ns", "a", 3)))
	mustOK(t, f.Resync())
	wantLines(t, popAll(t, f, nil),
		"ns/a: Updated:ns/a@3",
		"ns/b: Sync:ns/b@2",
	)
}

func TestInOrderPopBatchStopsAtRepeatedKeyAndInitialListEnd(t *testing.T) {
	f := newFIFO(t, Options[obj]{InOrder: true})
	mustOK(t, f.Replace([]obj{mk("ns", "a", 1), mk("ns", "b", 1)}, "1"))
	mustOK(t, f.Add(mk("ns", "c", 2)))
	mustOK(t, f.Add(mk("ns", "d", 3)))
	mustOK(t, f.Update(mk("ns", "c", 4)))
	var got []string
	var initial []bool
	batch := func(items []Item[obj], isInitial bool) error {
		line := ""
		for _, it := range items {
			line += "[" + it.Key + ": " + fmtDeltas(it.Deltas) + "]"
		}
		got = append(got, line)
		initial = append(initial, isInitial)
		return nil
	}
	for f.Len() > 0 {
		mustOK(t, f.PopBatch(t.Context(), batch))
	}
	wantLines(t, got,
		"[ns/a: Replaced:ns/a@1][ns/b: Replaced:ns/b@1]",
		"[ns/c: Added:ns/c@2][ns/d: Added:ns/d@3]",
		"[ns/c: Updated:ns/c@4]",
	)
	if !equalBools(initial, []bool{true, false, false}) {
		t.Fatalf("isInInitialList = %v", initial)
	}
}
