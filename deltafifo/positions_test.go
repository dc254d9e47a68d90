package deltafifo

import "testing"

// With Options.MarkPositions a ListBegin is a position in the queue: what
// was queued before the list began is handed out before it, and the FIFO
// queues no deletions of its own (the consumer's sweep finds them).

// TestMarkPositionsHandOutWhatCameBeforeTheListFirst: the keys queued
// before the list began come before its ListBegin, in batches of their
// own; a key the list mentions again gets a new entry after the mark;
// nothing is deleted by the FIFO, and a consumer sweeping at the ListEnd
// deletes what the list lacks.
func TestMarkPositionsHandOutWhatCameBeforeTheListFirst(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		t.Run(map[bool]string{false: "coalescing", true: "in order"}[inOrder], func(t *testing.T) {
			f := newFIFO(t, Options[obj]{ListMarks: true, MarkPositions: true, InOrder: inOrder, MaxBatch: 3})
			mustOK(t, f.Add(mk("ns", "gone", 1)))
			mustOK(t, f.Add(mk("ns", "deleted", 1)))
			mustOK(t, f.Delete(mk("ns", "deleted", 2)))
			mustOK(t, f.Add(mk("ns", "kept", 1)))
			mustOK(t, f.ReplacePage([]obj{mk("ns", "kept", 3)}, true))
			mustOK(t, f.ReplaceEnd("20"))
			m := newMarkStore()
			got := popBatches(t, f, m)
			if inOrder {
				wantLines(t, got,
					"ns/gone: Added:ns/gone@1 | ns/deleted: Added:ns/deleted@1",
					"ns/deleted: Deleted:ns/deleted@2 | ns/kept: Added:ns/kept@1",
					"begin | ns/kept: Replaced:ns/kept@3 | end@20 | progress@20")
			} else {
				wantLines(t, got,
					"ns/gone: Added:ns/gone@1 | ns/deleted: Added:ns/deleted@1 Deleted:ns/deleted@2 | ns/kept: Added:ns/kept@1",
					"begin | ns/kept: Replaced:ns/kept@3 | end@20 | progress@20")
			}
			if len(m.objs) != 1 || m.objs["ns/kept"] == nil || len(m.deleted) != 1 || m.deleted[0] != "ns/gone" {
				t.Fatalf("consumer holds %v and swept %v; want ns/kept, swept [ns/gone]", m.objs, m.deleted)
			}
		})
	}
}

// TestMarkPositionsSealAnEntryAtTheBegin: a write during the list to a key
// still queued from before it starts a new entry after the ListBegin,
// which does not count towards MaxBatch.
func TestMarkPositionsSealAnEntryAtTheBegin(t *testing.T) {
	f := newFIFO(t, Options[obj]{ListMarks: true, MarkPositions: true, MaxBatch: 1})
	mustOK(t, f.Update(mk("ns", "a", 1)))
	mustOK(t, f.ReplacePage([]obj{mk("ns", "b", 2)}, true))
	mustOK(t, f.Update(mk("ns", "a", 3)))
	mustOK(t, f.Update(mk("ns", "a", 4)))
	if f.Len() != 4 {
		t.Fatalf("Len = %d, want 4 (a twice, the mark, b)", f.Len())
	}
	mustOK(t, f.ReplaceEnd("5"))
	wantLines(t, popBatches(t, f, nil),
		"ns/a: Updated:ns/a@1",
		"begin | ns/b: Replaced:ns/b@2",
		"ns/a: Updated:ns/a@3 Updated:ns/a@4",
		"end@5 | progress@5")
	if !f.HasSynced() {
		t.Fatal("not synced after the list's end")
	}
}

// TestMarkPositionsALaterListVoidsAQueuedEnd: a list begun while an
// earlier one's end is queued voids that end; its own ListBegin starts a
// new batch (the consumer starts its session afresh there), except that a
// whole list's batch goes on into it, so that the consumer applies both
// at once.
func TestMarkPositionsALaterListVoidsAQueuedEnd(t *testing.T) {
	for _, whole := range []bool{false, true} {
		f := newFIFO(t, Options[obj]{ListMarks: true, MarkPositions: true, WholeLists: whole})
		mustOK(t, f.Replace([]obj{mk("ns", "a", 1), mk("ns", "b", 1)}, "10"))
		mustOK(t, f.Replace([]obj{mk("ns", "b", 2), mk("ns", "c", 2)}, "11"))
		m := newMarkStore()
		got := popBatches(t, f, m)
		if whole {
			wantLines(t, got, "begin | ns/a: Replaced:ns/a@1 | ns/b: Replaced:ns/b@1 | begin | ns/b: Replaced:ns/b@2 | ns/c: Replaced:ns/c@2 | end@11 | progress@11")
		} else {
			wantLines(t, got,
				"begin | ns/a: Replaced:ns/a@1 | ns/b: Replaced:ns/b@1",
				"begin | ns/b: Replaced:ns/b@2 | ns/c: Replaced:ns/c@2 | end@11 | progress@11")
		}
		if len(m.objs) != 2 || m.objs["ns/b"].ResourceVersion != "2" || m.objs["ns/c"] == nil {
			t.Fatalf("whole %v: consumer holds %v, want ns/b@2 and ns/c", whole, m.objs)
		}
		if !f.HasSynced() {
			t.Fatalf("whole %v: not synced after the later list's end", whole)
		}
	}
}

// TestMarkPositionsConvergeUnderRandomOperations: the property of
// TestListMarksConvergeUnderRandomOperations holds with the FIFO queueing
// no deletions: the consumer's sweep is enough.
func TestMarkPositionsConvergeUnderRandomOperations(t *testing.T) {
	convergeUnderRandomOperations(t, true)
}
