package deltafifo

import (
	"testing"
	"testing/synctest"
)

// While a PopBatch process function runs, adds and updates are queued at
// once (every write in in-order mode), Len counts the batch being processed,
// and the writes come out in the next batch, in order.
func TestPopBatchQueuesWritesWhileProcessing(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			k := newKnown()
			f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: inOrder})
			mustOK(t, f.Add(mk("ns", "a", 1)))
			mustOK(t, f.Add(mk("ns", "b", 2)))
			var got []string
			record := func(items []Item[obj]) {
				line := ""
				for _, it := range items {
					line += "[" + it.Key + ": " + fmtDeltas(it.Deltas) + "]"
					k.apply(it.Key, it.Deltas)
				}
				got = append(got, line)
			}
			mustOK(t, f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error {
				record(items)
				if n := f.Len(); n != 2 {
					t.Errorf("inOrder=%v: Len during processing = %d, want 2 (the batch)", inOrder, n)
				}
				// Would deadlock if the batch held the FIFO's lock.
				mustOK(t, f.Update(mk("ns", "a", 3)))
				mustOK(t, f.Add(mk("ns", "c", 4)))
				if inOrder {
					mustOK(t, f.Delete(mk("ns", "b", 5)))
				}
				if n := f.Len(); n != 4+boolInt(inOrder) {
					t.Errorf("inOrder=%v: Len = %d after queueing during processing", inOrder, n)
				}
				return nil
			}))
			for f.Len() > 0 {
				mustOK(t, f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error { record(items); return nil }))
			}
			want := []string{"[ns/a: Added:ns/a@1][ns/b: Added:ns/b@2]", "[ns/a: Updated:ns/a@3][ns/c: Added:ns/c@4]"}
			if inOrder {
				want[1] += "[ns/b: Deleted:ns/b@5]"
			}
			wantLines(t, got, want...)
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Replace, Resync and a coalescing Delete read the known objects, so they
// wait for a batch being processed to be applied: a Replace cannot miss an
// object that the batch is adding to the store, and a Delete of a key the
// batch is adding is not dropped as unknown.
func TestPopBatchReadersOfKnownObjectsWaitForTheBatch(t *testing.T) {
	cases := []struct {
		name    string
		inOrder bool
		during  func(f *FIFO[obj]) error
		want    []string
	}{
		{"coalescing delete of a key being added", false,
			func(f *FIFO[obj]) error { return f.Delete(mk("ns", "a", 2)) },
			[]string{"[ns/a: Added:ns/a@1]", "[ns/a: Deleted:ns/a@2]"}},
		{"coalescing replace without a key being added", false,
			func(f *FIFO[obj]) error { return f.Replace(nil, "2") },
			[]string{"[ns/a: Added:ns/a@1]", "[ns/a: Deleted?:ns/a@1]"}},
		{"in-order replace without a key being added", true,
			func(f *FIFO[obj]) error { return f.Replace(nil, "2") },
			[]string{"[ns/a: Added:ns/a@1]", "[ns/a: Deleted?:ns/a@1]"}},
		{"resync of a key being added", true,
			func(f *FIFO[obj]) error { return f.Resync() },
			[]string{"[ns/a: Added:ns/a@1]", "[ns/a: Sync:ns/a@1]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				k := newKnown()
				f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: tc.inOrder})
				mustOK(t, f.Add(mk("ns", "a", 1)))
				var got []string
				record := func(items []Item[obj]) {
					line := ""
					for _, it := range items {
						line += "[" + it.Key + ": " + fmtDeltas(it.Deltas) + "]"
					}
					got = append(got, line)
				}
				writerDone := make(chan error, 1)
				mustOK(t, f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error {
					record(items)
					go func() { writerDone <- tc.during(f) }()
					synctest.Wait() // the writer is blocked until the batch is applied
					select {
					case err := <-writerDone:
						t.Errorf("the write returned (%v) while the batch was being processed", err)
					default:
					}
					for _, it := range items {
						k.apply(it.Key, it.Deltas)
					}
					return nil
				}))
				mustOK(t, <-writerDone)
				for f.Len() > 0 {
					mustOK(t, f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error { record(items); return nil }))
				}
				wantLines(t, got, tc.want...)
			})
		})
	}
}

// A panicking batch process function leaves the FIFO usable.
func TestPopBatchPanicLeavesTheFIFOUsable(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	mustOK(t, f.Add(mk("ns", "a", 1)))
	func() {
		defer func() { _ = recover() }()
		_ = f.PopBatch(t.Context(), func([]Item[obj], bool) error { panic("boom") })
	}()
	mustOK(t, f.Add(mk("ns", "b", 2)))
	mustOK(t, f.Replace([]obj{mk("ns", "b", 3)}, "3")) // would wait forever on a stuck batch
	if n := f.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	wantLines(t, popAll(t, f, nil), "ns/b: Added:ns/b@2 Replaced:ns/b@3")
}
