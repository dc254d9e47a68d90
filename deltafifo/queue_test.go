package deltafifo

import (
	"fmt"
	"slices"
	"testing"
)

// The two queues (coalescer and ordered) tested alone, as plain data
// structures: no core, no lock, no goroutine.

func bothQueues(t *testing.T, fn func(t *testing.T, q queue[obj], inOrder bool)) {
	t.Run("coalescing", func(t *testing.T) { fn(t, newQueue[obj](false), false) })
	t.Run("in-order", func(t *testing.T) { fn(t, newQueue[obj](true), true) })
}

// drainQueue pops every element with pop: "key: deltas", "END" for a
// ListEnd sentinel.
func drainQueue(t *testing.T, q queue[obj]) []string {
	t.Helper()
	var out []string
	for q.len() > 0 {
		if q.headIsEnd() {
			q.popEnd()
			out = append(out, "END")
			continue
		}
		mustOK(t, q.pop(func(key string, ds []Delta[obj], _ bool) error {
			out = append(out, key+": "+fmtDeltas(ds))
			return nil
		}, false))
	}
	return out
}

func add(o obj) (string, Delta[obj])    { return keyOf(o), Delta[obj]{Type: Added, Object: o} }
func update(o obj) (string, Delta[obj]) { return keyOf(o), Delta[obj]{Type: Updated, Object: o} }
func del(o obj) (string, Delta[obj])    { return keyOf(o), Delta[obj]{Type: Deleted, Object: o} }

func TestQueuePushAndPop(t *testing.T) {
	bothQueues(t, func(t *testing.T, q queue[obj], inOrder bool) {
		var fresh []bool
		for _, kd := range []func() (string, Delta[obj]){
			func() (string, Delta[obj]) { return add(mk("ns", "a", 1)) },
			func() (string, Delta[obj]) { return add(mk("ns", "b", 2)) },
			func() (string, Delta[obj]) { return update(mk("ns", "a", 3)) },
			func() (string, Delta[obj]) { return del(mk("ns", "a", 4)) },
			func() (string, Delta[obj]) { return del(mk("ns", "a", 5)) },
		} {
			fresh = append(fresh, q.push(kd()))
		}
		if inOrder {
			if want := []bool{true, true, true, true, true}; !slices.Equal(fresh, want) {
				t.Fatalf("fresh = %v, want %v", fresh, want)
			}
			wantLines(t, drainQueue(t, q),
				"ns/a: Added:ns/a@1",
				"ns/b: Added:ns/b@2",
				"ns/a: Updated:ns/a@3",
				"ns/a: Deleted:ns/a@4",
				"ns/a: Deleted:ns/a@5",
			)
			return
		}
		if want := []bool{true, true, false, false, false}; !slices.Equal(fresh, want) {
			t.Fatalf("fresh = %v, want %v", fresh, want)
		}
		wantLines(t, drainQueue(t, q),
			"ns/a: Added:ns/a@1 Updated:ns/a@3 Deleted:ns/a@4",
			"ns/b: Added:ns/b@2",
		)
	})
}

func TestQueueSkipDelete(t *testing.T) {
	k := typedKnown[obj]{newKnown(mk("ns", "known", 1))}
	bothQueues(t, func(t *testing.T, q queue[obj], inOrder bool) {
		q.push(add(mk("ns", "queued", 1)))
		if q.skipsDeletes() == inOrder {
			t.Fatalf("skipsDeletes = %v in mode inOrder=%v", q.skipsDeletes(), inOrder)
		}
		if !q.skipsDeletes() {
			return
		}
		for key, want := range map[string]bool{"ns/queued": false, "ns/known": false, "ns/none": true} {
			if got := q.skipDelete(key, k); got != want {
				t.Errorf("skipDelete(%s) = %v, want %v", key, got, want)
			}
		}
		if !q.skipDelete("ns/known", nil) {
			t.Errorf("without a known store, an unqueued key's deletion is not skipped")
		}
	})
}

func TestQueueListModeProperties(t *testing.T) {
	bothQueues(t, func(t *testing.T, q queue[obj], inOrder bool) {
		want := Sync
		if inOrder {
			want = Replaced
		}
		if got := q.listType(Sync); got != want {
			t.Errorf("listType(Sync) = %v, want %v", got, want)
		}
		if q.deletionsFirst() != inOrder {
			t.Errorf("deletionsFirst = %v", q.deletionsFirst())
		}
	})
}

func TestQueueReplace(t *testing.T) {
	k := typedKnown[obj]{newKnown(mk("ns", "known-kept", 1), mk("ns", "known-gone", 2))}
	lookup := func(key string) obj { o, _ := k.k.GetByKey(key); return o }
	bothQueues(t, func(t *testing.T, q queue[obj], inOrder bool) {
		q.push(add(mk("ns", "queued-gone", 3)))
		q.push(add(mk("ns", "deleted", 4)))
		q.push(del(mk("ns", "deleted", 5)))
		listed := []obj{mk("ns", "known-kept", 10), mk("ns", "new", 10)}
		keys := []string{keyOf(listed[0]), keyOf(listed[1])}
		deltas := []Delta[obj]{{Type: Replaced, Object: listed[0]}, {Type: Replaced, Object: listed[1]}}
		q.replace(keys, deltas, k, lookup)
		if inOrder {
			wantLines(t, drainQueue(t, q),
				"ns/queued-gone: Added:ns/queued-gone@3",
				"ns/deleted: Added:ns/deleted@4",
				"ns/deleted: Deleted:ns/deleted@5",
				"ns/queued-gone: Deleted?:ns/queued-gone@3",
				"ns/known-gone: Deleted?:ns/known-gone@2",
				"ns/known-kept: Replaced:ns/known-kept@10",
				"ns/new: Replaced:ns/new@10",
			)
			return
		}
		wantLines(t, drainQueue(t, q),
			"ns/queued-gone: Added:ns/queued-gone@3 Deleted?:ns/queued-gone@3",
			"ns/deleted: Added:ns/deleted@4 Deleted:ns/deleted@5",
			"ns/known-kept: Replaced:ns/known-kept@10",
			"ns/new: Replaced:ns/new@10",
			"ns/known-gone: Deleted?:ns/known-gone@2",
		)
	})
}

func TestQueueResync(t *testing.T) {
	k := typedKnown[obj]{newKnown(mk("ns", "a", 1), mk("ns", "b", 2), mk("ns", "vanished", 3))}
	lookup := func(key string) (obj, bool) {
		if key == "ns/vanished" {
			return nil, false
		}
		o, ok := k.k.GetByKey(key)
		return o, ok
	}
	bothQueues(t, func(t *testing.T, q queue[obj], _ bool) {
		q.push(update(mk("ns", "a", 5)))
		q.resync(k, lookup)
		wantLines(t, drainQueue(t, q),
			"ns/a: Updated:ns/a@5",
			"ns/b: Sync:ns/b@2",
		)
	})
}

func TestQueueScanGivesEachKeysLastDelta(t *testing.T) {
	bothQueues(t, func(t *testing.T, q queue[obj], _ bool) {
		q.push(add(mk("ns", "a", 1)))
		q.pushEnd()
		q.push(add(mk("ns", "b", 2)))
		q.push(update(mk("ns", "a", 3)))
		last := map[string]string{}
		q.scan(func(key string, d Delta[obj]) { last[key] = fmtDeltas([]Delta[obj]{d}) })
		want := map[string]string{"ns/a": "Updated:ns/a@3", "ns/b": "Added:ns/b@2"}
		if len(last) != len(want) || last["ns/a"] != want["ns/a"] || last["ns/b"] != want["ns/b"] {
			t.Fatalf("scan = %v, want %v", last, want)
		}
	})
}

func TestQueueDeleteUnlisted(t *testing.T) {
	bothQueues(t, func(t *testing.T, q queue[obj], inOrder bool) {
		q.push(add(mk("ns", "a", 1)))
		q.push(add(mk("ns", "b", 2)))
		q.push(del(mk("ns", "b", 3)))
		var asked []string
		n := q.deleteUnlisted([]string{"ns/a", "ns/b", "ns/c", "ns/d"}, func(key string) bool {
			asked = append(asked, key)
			if key == "ns/c" {
				q.push(keyOf(mk("ns", "c", 9)), Delta[obj]{Type: Deleted, FinalStateUnknown: true, Object: mk("ns", "c", 9)})
				return true
			}
			return false
		})
		if n != 2 || !slices.Equal(asked, []string{"ns/c", "ns/d"}) {
			t.Fatalf("deleteUnlisted = %d, asked %v; want 2, [ns/c ns/d]", n, asked)
		}
		if inOrder {
			wantLines(t, drainQueue(t, q),
				"ns/a: Added:ns/a@1",
				"ns/b: Added:ns/b@2",
				"ns/b: Deleted:ns/b@3",
				"ns/a: Deleted?:ns/a@1",
				"ns/c: Deleted?:ns/c@9",
			)
			return
		}
		wantLines(t, drainQueue(t, q),
			"ns/a: Added:ns/a@1 Deleted?:ns/a@1",
			"ns/b: Added:ns/b@2 Deleted:ns/b@3",
			"ns/c: Deleted?:ns/c@9",
		)
	})
}

func TestQueueSentinelsKeepTheirPlace(t *testing.T) {
	bothQueues(t, func(t *testing.T, q queue[obj], _ bool) {
		q.push(add(mk("ns", "a", 1)))
		q.pushEnd()
		q.push(add(mk("ns", "b", 2)))
		if q.len() != 3 {
			t.Fatalf("len = %d, want 3 (a sentinel counts)", q.len())
		}
		wantLines(t, drainQueue(t, q), "ns/a: Added:ns/a@1", "END", "ns/b: Added:ns/b@2")
	})
}

func TestQueueBatch(t *testing.T) {
	bothQueues(t, func(t *testing.T, q queue[obj], inOrder bool) {
		q.push(add(mk("ns", "a", 1)))
		q.push(add(mk("ns", "b", 2)))
		q.push(update(mk("ns", "a", 3)))
		take := func(limit int, allowDup bool) []string {
			q.beginBatch(limit)
			defer q.endBatch()
			var got []string
			for range limit {
				it, ok := q.takeItem(allowDup)
				if !ok {
					break
				}
				got = append(got, it.Key+": "+fmtDeltas(it.Deltas))
			}
			return got
		}
		if !inOrder {
			wantLines(t, take(2, false), "ns/a: Added:ns/a@1 Updated:ns/a@3", "ns/b: Added:ns/b@2")
			return
		}
		// A batch ends before a key it holds, unless duplicates are allowed.
		wantLines(t, take(3, false), "ns/a: Added:ns/a@1", "ns/b: Added:ns/b@2")
		q.push(add(mk("ns", "c", 4)))
		q.push(update(mk("ns", "a", 5)))
		wantLines(t, take(3, true), "ns/a: Updated:ns/a@3", "ns/c: Added:ns/c@4", "ns/a: Updated:ns/a@5")
		if q.len() != 0 {
			t.Fatalf("len = %d after the batches", q.len())
		}
	})
}

// A queue that fills with each watch burst and empties with each batch
// keeps its ring: emptying it must not shrink the ring, or the next burst
// regrows it (that churn was 4% of an informer's CPU per event).
func TestQueueRingKeptAcrossBursts(t *testing.T) {
	bothQueues(t, func(t *testing.T, q queue[obj], inOrder bool) {
		ringCap := func() int {
			switch q := q.(type) {
			case *coalescer[obj]:
				return q.order.Cap()
			case *ordered[obj]:
				return q.events.Cap()
			}
			t.Fatalf("unknown queue %T", q)
			return 0
		}
		const burst = 500
		objs := make([]obj, burst)
		for i := range objs {
			objs[i] = mk("ns", fmt.Sprint("o", i), i+1)
		}
		for round := range 3 {
			for _, o := range objs {
				q.push(update(o))
			}
			full := ringCap()
			q.beginBatch(defaultMaxBatch)
			for q.len() > 0 {
				if _, ok := q.takeItem(true); !ok {
					t.Fatalf("round %d: takeItem refused with %d queued", round, q.len())
				}
			}
			q.endBatch()
			if q.len() != 0 {
				t.Fatalf("round %d: %d left after the batch", round, q.len())
			}
			if got := ringCap(); got != full {
				t.Fatalf("round %d: ring capacity %d after the batch, %d before: an emptied ring must keep its room", round, got, full)
			}
		}
	})
}
