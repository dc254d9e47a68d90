package deltafifo

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// markStore is a consumer of a FIFO with list marks, as the informer is:
// it applies each batch in order, counting what it writes between a
// ListBegin and a ListEnd as listed, and at the ListEnd deletes the rest.
type markStore struct {
	objs    map[string]obj
	listed  map[string]bool // nil outside a session
	deleted []string        // keys the sweeps deleted, in order
}

func newMarkStore() *markStore { return &markStore{objs: map[string]obj{}} }

func (m *markStore) apply(items []Item[obj]) {
	for _, it := range items {
		switch it.List {
		case ListBegin:
			m.listed = map[string]bool{}
		case ListProgress:
		case ListEnd:
			for _, key := range slices.Sorted(maps.Keys(m.objs)) {
				if m.listed != nil && !m.listed[key] {
					delete(m.objs, key)
					m.deleted = append(m.deleted, key)
				}
			}
			m.listed = nil
		default:
			for _, d := range it.Deltas {
				if d.Type == Deleted {
					delete(m.objs, it.Key)
				} else {
					m.objs[it.Key] = d.Object
				}
			}
			if m.listed != nil {
				m.listed[it.Key] = true
			}
		}
	}
}

// fmtBatch renders a batch: "begin", "key: deltas", "end@rv",
// "progress@rv".
func fmtBatch(items []Item[obj]) string {
	parts := make([]string, len(items))
	for i, it := range items {
		switch it.List {
		case ListBegin:
			parts[i] = "begin"
		case ListEnd:
			parts[i] = "end@" + it.ResourceVersion
		case ListProgress:
			parts[i] = "progress@" + it.ResourceVersion
		default:
			parts[i] = it.Key + ": " + fmtDeltas(it.Deltas)
		}
	}
	return strings.Join(parts, " | ")
}

// popBatches pops until the FIFO is empty, feeding m (if not nil), and
// returns one line per batch.
func popBatches(t *testing.T, f *FIFO[obj], m *markStore) []string {
	t.Helper()
	var out []string
	for f.Len() > 0 {
		err := f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error {
			out = append(out, fmtBatch(items))
			if m != nil {
				m.apply(items)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("PopBatch: %v", err)
		}
	}
	return out
}

func TestListMarksBracketARelistAndSyncAtItsEnd(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		t.Run(map[bool]string{false: "coalescing", true: "in order"}[inOrder], func(t *testing.T) {
			f := newFIFO(t, Options[obj]{ListMarks: true, InOrder: inOrder, MaxBatch: 2})
			mustOK(t, f.Replace([]obj{mk("ns", "a", 1), mk("ns", "b", 1), mk("ns", "c", 1)}, "10"))
			if f.HasSynced() {
				t.Fatal("synced before the list's end was processed")
			}
			if err := f.Pop(t.Context(), func(string, []Delta[obj], bool) error { return nil }); !errors.Is(err, ErrListMarksNeedBatch) {
				t.Fatalf("Pop = %v, want ErrListMarksNeedBatch", err)
			}
			wantLines(t, popBatches(t, f, nil),
				"begin | ns/a: Replaced:ns/a@1 | ns/b: Replaced:ns/b@1",
				"ns/c: Replaced:ns/c@1 | end@10 | progress@10")
			if !f.HasSynced() {
				t.Fatal("not synced after the list's end")
			}
		})
	}
}

// TestListMarksDeleteWhatTheFIFOHeldAndTheListLacks: keys queued when a
// list begins and mentioned by nothing since get a final-state-unknown
// deletion before the end, with their last queued state, whether they
// are still queued at the end or were popped meanwhile.
func TestListMarksDeleteWhatTheFIFOHeldAndTheListLacks(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		t.Run(map[bool]string{false: "coalescing", true: "in order"}[inOrder], func(t *testing.T) {
			f := newFIFO(t, Options[obj]{ListMarks: true, InOrder: inOrder, MaxBatch: 1})
			mustOK(t, f.Add(mk("ns", "gone-popped", 1)))
			mustOK(t, f.Add(mk("ns", "gone-queued", 1)))
			mustOK(t, f.Add(mk("ns", "deleted", 1)))
			mustOK(t, f.Delete(mk("ns", "deleted", 2)))
			mustOK(t, f.Add(mk("ns", "kept", 1)))
			mustOK(t, f.ReplacePage([]obj{mk("ns", "kept", 3)}, true))
			got := popBatches1(t, f) // the list's first batch
			mustOK(t, f.ReplaceEnd("20"))
			got = append(got, popBatches(t, f, nil)...)
			if inOrder {
				wantLines(t, got,
					"begin | ns/gone-popped: Added:ns/gone-popped@1",
					"ns/gone-queued: Added:ns/gone-queued@1",
					"ns/deleted: Added:ns/deleted@1",
					"ns/deleted: Deleted:ns/deleted@2",
					"ns/kept: Added:ns/kept@1",
					"ns/kept: Replaced:ns/kept@3",
					"ns/gone-popped: Deleted?:ns/gone-popped@1",
					"ns/gone-queued: Deleted?:ns/gone-queued@1",
					"end@20 | progress@20")
				return
			}
			wantLines(t, got,
				"begin | ns/gone-popped: Added:ns/gone-popped@1",
				"ns/gone-queued: Added:ns/gone-queued@1 Deleted?:ns/gone-queued@1",
				"ns/deleted: Added:ns/deleted@1 Deleted:ns/deleted@2",
				"ns/kept: Added:ns/kept@1 Replaced:ns/kept@3",
				"ns/gone-popped: Deleted?:ns/gone-popped@1",
				"end@20 | progress@20")
		})
	}
}

// popBatches1 pops exactly one batch.
func popBatches1(t *testing.T, f *FIFO[obj]) []string {
	t.Helper()
	var out []string
	mustOK(t, f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error {
		out = append(out, fmtBatch(items))
		return nil
	}))
	return out
}

func TestListMarksQueueEveryDelete(t *testing.T) {
	f := newFIFO(t, Options[obj]{ListMarks: true})
	mustOK(t, f.Delete(mk("ns", "unknown-here", 4)))
	wantLines(t, popBatches(t, f, nil), "ns/unknown-here: Deleted:ns/unknown-here@4 | progress@4")
}

// TestListMarksALaterListVoidsAQueuedEnd: two lists queued with no batch
// in between share one begin, and only the later end is delivered.
func TestListMarksALaterListVoidsAQueuedEnd(t *testing.T) {
	f := newFIFO(t, Options[obj]{ListMarks: true})
	mustOK(t, f.Replace([]obj{mk("ns", "a", 1), mk("ns", "b", 1)}, "10"))
	mustOK(t, f.Replace([]obj{mk("ns", "b", 2), mk("ns", "c", 2)}, "11"))
	wantLines(t, popBatches(t, f, nil),
		"begin | ns/a: Replaced:ns/a@1 Deleted?:ns/a@1 | ns/b: Replaced:ns/b@1 Replaced:ns/b@2 | ns/c: Replaced:ns/c@2 | end@11 | progress@11")
	if !f.HasSynced() {
		t.Fatal("not synced after the later list's end")
	}
}

func TestListMarksWholeListsIgnoreMaxBatch(t *testing.T) {
	f := newFIFO(t, Options[obj]{ListMarks: true, WholeLists: true, MaxBatch: 1})
	mustOK(t, f.Add(mk("ns", "x", 1)))
	mustOK(t, f.Replace([]obj{mk("ns", "a", 1), mk("ns", "b", 1)}, "10"))
	mustOK(t, f.Add(mk("ns", "y", 1)))
	wantLines(t, popBatches(t, f, nil),
		"begin | ns/x: Added:ns/x@1 Deleted?:ns/x@1 | ns/a: Replaced:ns/a@1 | ns/b: Replaced:ns/b@1 | end@10",
		"ns/y: Added:ns/y@1 | progress@1")
}

// TestListMarksConvergeUnderRandomOperations: whatever the interleaving of
// watch events (some lost), lists whole or in pages (some abandoned) and
// batches of any size, a consumer that applies the batches and sweeps at
// each ListEnd ends equal to what the FIFO was told (a reference applying
// each write, and each completed list as the whole content), and equal to
// the server after one more list.
func TestListMarksConvergeUnderRandomOperations(t *testing.T) {
	convergeUnderRandomOperations(t, false)
}

// convergeUnderRandomOperations is the property of
// TestListMarksConvergeUnderRandomOperations, with Options.MarkPositions
// set to positions.
func convergeUnderRandomOperations(t *testing.T, positions bool) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 7))
		f := newFIFO(t, Options[obj]{ListMarks: true, MarkPositions: positions, InOrder: seed%2 == 1, WholeLists: seed%3 == 0, MaxBatch: 1 + r.IntN(4)})
		server, told := map[string]obj{}, map[string]obj{}
		var pages map[string]obj // what the open paged list and the writes since have said; nil when none is open
		write := func(key string, o obj) {
			for _, m := range []map[string]obj{told, pages} {
				if m == nil {
					continue
				}
				if o == nil {
					delete(m, key)
				} else {
					m[key] = o
				}
			}
		}
		m := newMarkStore()
		rv := 1
		names := []string{"a", "b", "c", "d", "e", "f"}
		for range 60 {
			rv++
			name := names[r.IntN(len(names))]
			key := "ns/" + name
			switch op := r.IntN(10); {
			case op < 4: // a change, its event lost one time in four
				o := mk("ns", name, rv)
				_, exists := server[key]
				server[key] = o
				if r.IntN(4) > 0 {
					if exists {
						mustOK(t, f.Update(o))
					} else {
						mustOK(t, f.Add(o))
					}
					write(key, o)
				}
			case op < 6: // a deletion, its event lost one time in four
				old, exists := server[key]
				delete(server, key)
				if exists && r.IntN(4) > 0 {
					mustOK(t, f.Delete(old))
					write(key, nil)
				}
			case op < 7: // a whole list
				mustOK(t, f.Replace(slices.Collect(maps.Values(server)), "x"))
				told, pages = maps.Clone(server), nil
			case op < 8: // a page of a list, sometimes abandoned for a new one
				page := slices.Collect(maps.Values(server))
				page = page[:r.IntN(len(page)+1)]
				first := pages == nil || r.IntN(3) == 0
				mustOK(t, f.ReplacePage(page, first))
				if first {
					pages = map[string]obj{}
				}
				for _, o := range page {
					pages[keyOf(o)] = o
				}
			case op < 9:
				if pages != nil { // the end of a paged list: list the rest
					rest := slices.Collect(maps.Values(server))
					mustOK(t, f.ReplacePage(rest, false))
					mustOK(t, f.ReplaceEnd("x"))
					for _, o := range rest {
						pages[keyOf(o)] = o
					}
					told, pages = pages, nil
				}
			default:
				if f.Len() > 0 {
					mustOK(t, f.PopBatch(t.Context(), func(items []Item[obj], _ bool) error { m.apply(items); return nil }))
				}
			}
		}
		if pages != nil {
			mustOK(t, f.ReplaceEnd("x"))
			told = pages
		}
		sameRV := func(a, b obj) bool { return a.ResourceVersion == b.ResourceVersion }
		popBatches(t, f, m)
		if !maps.EqualFunc(m.objs, told, sameRV) {
			t.Fatalf("seed %d: consumer %v, told %v", seed, slices.Sorted(maps.Keys(m.objs)), slices.Sorted(maps.Keys(told)))
		}
		mustOK(t, f.Replace(slices.Collect(maps.Values(server)), "final"))
		popBatches(t, f, m)
		if !maps.EqualFunc(m.objs, server, sameRV) {
			t.Fatalf("seed %d: consumer %v, server %v", seed, slices.Sorted(maps.Keys(m.objs)), slices.Sorted(maps.Keys(server)))
		}
		if !f.HasSynced() {
			t.Fatalf("seed %d: not synced", seed)
		}
	}
}

// TestListMarksTellProgress: the batch that empties the queue ends with a
// ListProgress item carrying the last resource version queued (a write's,
// a list's end, a Progress call), once, and only then; a write queued
// while a list is queued in pages does not count; a Progress call with
// nothing queued makes a batch of its own.
func TestListMarksTellProgress(t *testing.T) {
	f := newFIFO(t, Options[obj]{ListMarks: true, MaxBatch: 1})
	mustOK(t, f.Add(mk("ns", "a", 5)))
	mustOK(t, f.Add(mk("ns", "b", 6)))
	wantLines(t, popBatches(t, f, nil), "ns/a: Added:ns/a@5", "ns/b: Added:ns/b@6 | progress@6")
	f.Progress("9")
	f.Progress("")
	wantLines(t, popBatches1(t, f), "progress@9")
	mustOK(t, f.ReplacePage([]obj{mk("ns", "a", 7)}, true))
	mustOK(t, f.Add(mk("ns", "c", 8))) // during the paged list: no progress
	wantLines(t, popBatches(t, f, nil), "begin | ns/a: Replaced:ns/a@7", "ns/c: Added:ns/c@8")
	mustOK(t, f.ReplaceEnd("10"))
	wantLines(t, popBatches(t, f, nil), "end@10 | progress@10") // b left the FIFO before the list: the consumer's sweep deletes it
}
