package informer

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
)

// The delivery modes tested alone: pending's merge and deliver, and the two
// buffers, scripted without a listener, a clock or a goroutine.

// TestPendingMergeDeliver folds each script's notifications into one
// pending entry, as a coalescing listener does for a key while its handler
// lags, and checks the handler calls that deliver makes.
func TestPendingMergeDeliver(t *testing.T) {
	initialAdd := func(o *obj) *notification[*obj] {
		n := add(o)
		n.InInitialList = true
		return n
	}
	for _, tc := range []struct {
		name  string
		notes []*notification[*obj]
		want  []string
	}{
		{"add", []*notification[*obj]{add(a1)}, []string{"add a@1 initial=false"}},
		{"initial add", []*notification[*obj]{initialAdd(a1)}, []string{"add a@1 initial=true"}},
		{"update", []*notification[*obj]{upd(a1, a2)}, []string{"update a@1 -> a@2"}},
		{"delete", []*notification[*obj]{del(a1, false)}, []string{"delete a@1 unknown=false"}},
		{"final state unknown delete", []*notification[*obj]{del(a1, true)}, []string{"delete a@1 unknown=true"}},
		{"resync", []*notification[*obj]{syn(a1)}, []string{"update a@1 -> a@1"}},
		{"add then updates: the newest add", []*notification[*obj]{add(a1), upd(a1, a2), upd(a2, a3)},
			[]string{"add a@3 initial=false"}},
		{"updates: from the state the handler has to the newest", []*notification[*obj]{upd(a1, a2), upd(a2, a3)},
			[]string{"update a@1 -> a@3"}},
		{"update then delete", []*notification[*obj]{upd(a1, a2), del(a2, false)}, []string{"delete a@2 unknown=false"}},
		{"born and gone: nothing", []*notification[*obj]{add(a1), upd(a1, a2), del(a2, false)}, nil},
		{"born, gone and born again: one add", []*notification[*obj]{add(a1), del(a1, false), add(a2)},
			[]string{"add a@2 initial=false"}},
		{"delete then add: a re-creation", []*notification[*obj]{del(a1, false), add(a2)},
			[]string{"delete a@1 unknown=false", "add a@2 initial=false"}},
		{"update, delete, add: a re-creation", []*notification[*obj]{upd(a1, a2), del(a2, true), add(a3)},
			[]string{"delete a@2 unknown=true", "add a@3 initial=false"}},
		{"re-creation then update", []*notification[*obj]{del(a1, false), add(a2), upd(a2, a3)},
			[]string{"delete a@1 unknown=false", "add a@3 initial=false"}},
		{"two deletes: the last", []*notification[*obj]{del(a1, true), del(a2, false)}, []string{"delete a@2 unknown=false"}},
		{"resync then update", []*notification[*obj]{syn(a1), upd(a1, a2)}, []string{"update a@1 -> a@2"}},
		{"update then resync: the resync adds nothing", []*notification[*obj]{upd(a1, a2), syn(a2)},
			[]string{"update a@1 -> a@2"}},
		{"add then resync", []*notification[*obj]{add(a1), syn(a1)}, []string{"add a@1 initial=false"}},
		{"resync then delete", []*notification[*obj]{syn(a1), del(a1, false)}, []string{"delete a@1 unknown=false"}},
		{"the initial flag of the last add", []*notification[*obj]{del(a1, false), initialAdd(a2)},
			[]string{"delete a@1 unknown=false", "add a@2 initial=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPending(tc.notes[0], 7)
			for _, n := range tc.notes[1:] {
				p.merge(n)
			}
			if p.since != 7 {
				t.Errorf("since = %d, want the first arrival's 7", p.since)
			}
			var r recorder
			calls := p.deliver(&r)
			got := r.take()
			if !slices.Equal(got, tc.want) || calls != len(tc.want) {
				t.Fatalf("deliver made %d calls %q, want %q", calls, got, tc.want)
			}
		})
	}
}

// drainBuffer takes everything from b, delivering each entry to a recorder:
// one line per entry, "#seq key: calls".
func drainBuffer(b buffer[*obj]) []string {
	var out []string
	for {
		key, seq, p, ok := b.take()
		if !ok {
			return out
		}
		var r recorder
		p.deliver(&r)
		out = append(out, fmt.Sprintf("#%d %s: %s", seq, key, strings.Join(r.take(), ", ")))
	}
}

func TestOrderedBufferDeliversEveryNotification(t *testing.T) {
	b := newBuffer[*obj](InOrder)
	if !b.empty() {
		t.Fatal("new buffer not empty")
	}
	for i, n := range []*notification[*obj]{add(a1), add(b1), upd(a1, a2), syn(b1), del(a2, true), add(a3)} {
		b.add(n, int64(10+i))
	}
	if n, oldest := b.pending(); n != 6 || oldest != 10 || b.lastSeq() != 6 || b.coalesced() != 0 {
		t.Fatalf("pending = %d since %d, lastSeq %d, coalesced %d; want 6 since 10, 6, 0", n, oldest, b.lastSeq(), b.coalesced())
	}
	// The ordered buffer keeps no keys (the listener works a key out from
	// the object when it needs one).
	wantCalls(t, drainBuffer(b),
		"#1 : add a@1 initial=false",
		"#2 : add b@1 initial=false",
		"#3 : update a@1 -> a@2",
		"#4 : update b@1 -> b@1",
		"#5 : delete a@2 unknown=true",
		"#6 : add a@3 initial=false",
	)
	if !b.empty() {
		t.Fatal("drained buffer not empty")
	}
	b.add(add(c1), 20)
	b.clear()
	if !b.empty() || b.lastSeq() != 7 {
		t.Fatalf("after clear: empty %v, lastSeq %d; want true, 7", b.empty(), b.lastSeq())
	}
}

func TestCoalescingBufferKeepsOneEntryPerKey(t *testing.T) {
	b := newBuffer[*obj](Coalesce)
	for i, n := range []*notification[*obj]{add(a1), add(b1), upd(a1, a2), syn(b1), del(a2, true), add(a3), add(c1)} {
		b.add(n, int64(10+i))
	}
	if b.empty() {
		t.Fatal("buffer empty")
	}
	if n, oldest := b.pending(); n != 3 || oldest != 10 || b.lastSeq() != 3 || b.coalesced() != 4 {
		t.Fatalf("pending = %d since %d, lastSeq %d, coalesced %d; want 3 since 10, 3, 4", n, oldest, b.lastSeq(), b.coalesced())
	}
	// Keys go in order of first arrival; a's add, update, delete and
	// re-creation fold into one add (it was born while pending).
	key, seq, p, ok := b.take()
	if !ok || key != "a" || seq != 1 {
		t.Fatalf("take = %q #%d %v", key, seq, ok)
	}
	var r recorder
	p.deliver(&r)
	wantCalls(t, r.take(), "add a@3 initial=false")
	// A notification for a key already taken starts a new entry, after
	// the ones waiting.
	b.add(upd(a3, &obj{"a", 4}), 30)
	if n, oldest := b.pending(); n != 3 || oldest != 11 {
		t.Fatalf("pending = %d since %d; want 3 since 11", n, oldest)
	}
	wantCalls(t, drainBuffer(b),
		"#2 b: add b@1 initial=false",
		"#3 c: add c@1 initial=false",
		"#4 a: update a@3 -> a@4",
	)
	if !b.empty() {
		t.Fatal("drained buffer not empty")
	}
	if n, _ := b.pending(); n != 0 {
		t.Fatalf("pending = %d after draining", n)
	}
}

// A coalescing buffer folds by itself every foldAt notifications, so that
// memory stays bounded by the number of keys however long nobody takes.
func TestCoalescingBufferFoldsAtFoldAt(t *testing.T) {
	b := newBuffer[*obj](Coalesce).(*coalescingBuffer[*obj])
	for i := range 3 * foldAt {
		b.add(upd(a1, &obj{"a", i}), int64(i))
		if len(b.unfolded) >= foldAt {
			t.Fatalf("%d notifications unfolded after %d adds", len(b.unfolded), i+1)
		}
	}
	if len(b.unfolded) != 0 || len(b.entries) != 1 || b.merged != 3*foldAt-1 {
		t.Fatalf("unfolded %d, entries %d, merged %d after the third fold; want 0, 1, %d",
			len(b.unfolded), len(b.entries), b.merged, 3*foldAt-1)
	}
	wantCalls(t, drainBuffer(b), fmt.Sprintf("#1 a: update a@1 -> a@%d", 3*foldAt-1))
}

func TestCoalescingBufferClearDropsEverything(t *testing.T) {
	b := newBuffer[*obj](Coalesce)
	b.add(add(a1), 1)
	b.add(add(b1), 2)
	_ = b.lastSeq() // folds
	b.add(add(c1), 3)
	b.clear()
	if !b.empty() {
		t.Fatal("cleared buffer not empty")
	}
	if got := drainBuffer(b); len(got) != 0 {
		t.Fatalf("cleared buffer delivered %q", got)
	}
}

// The map of a coalescing buffer that held many keys is replaced once it
// empties (a Go map never shrinks); a small one is kept.
func TestCoalescingBufferReplacesABigEmptiedMap(t *testing.T) {
	b := newBuffer[*obj](Coalesce).(*coalescingBuffer[*obj])
	for i := range bigEntries + 1 {
		b.add(add(&obj{fmt.Sprint(i), 1}), 0)
	}
	if got := len(drainBuffer(b)); got != bigEntries+1 {
		t.Fatalf("delivered %d entries", got)
	}
	if b.track.Peak() != 0 {
		t.Fatalf("peak = %d after emptying a big map, want 0 (replaced)", b.track.Peak())
	}
	b.add(add(a1), 0)
	drainBuffer(b)
	if b.track.Peak() != 1 {
		t.Fatalf("peak = %d after emptying a small map, want 1 (kept)", b.track.Peak())
	}
}

// A buffer that fills past bigEntries on every burst keeps its map from
// the second burst on (cleared, not regrown), and replaces it once a burst
// is small again.
func TestCoalescingBufferKeepsTheMapOfRepeatedBursts(t *testing.T) {
	b := newBuffer[*obj](Coalesce).(*coalescingBuffer[*obj])
	burst := func(n int) {
		t.Helper()
		for i := range n {
			b.add(add(&obj{fmt.Sprint(i), 1}), 0)
		}
		if got := len(drainBuffer(b)); got != n {
			t.Fatalf("delivered %d entries, want %d", got, n)
		}
	}
	orig := b.entries
	burst(2 * bigEntries)
	if b.track.Peak() != 0 || sameMap(b.entries, orig) {
		t.Fatalf("peak = %d after the first big burst, want 0 (replaced)", b.track.Peak())
	}
	second := b.entries
	for range 2 {
		burst(2 * bigEntries)
		if b.track.Peak() != 2*bigEntries || !sameMap(b.entries, second) {
			t.Fatalf("peak = %d after a repeated big burst, want %d (kept)", b.track.Peak(), 2*bigEntries)
		}
	}
	burst(10)
	if b.track.Peak() != 0 || sameMap(b.entries, second) {
		t.Fatalf("peak = %d after a small burst, want 0 (the big map replaced)", b.track.Peak())
	}
}

// sameMap reports whether a and b are the same map (not equal contents).
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func wantCalls(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// A buffer gives memory back after a burst, down to ringKeep slots, once
// a window of low traffic has passed (its rings are patient; the ring
// itself is tested in internal/ring).
func TestBuffersShrinkAfterABurst(t *testing.T) {
	for _, mode := range []DeliveryMode{Coalesce, InOrder} {
		b := newBuffer[*obj](mode)
		for i := range 10000 {
			b.add(add(&obj{fmt.Sprint(i), 1}), 0)
		}
		if got := len(drainBuffer(b)); got != 10000 {
			t.Fatalf("mode %d: delivered %d entries", mode, got)
		}
		for i := range 2 * 16384 { // low traffic: one waits at a time
			b.add(add(&obj{fmt.Sprint(i), 1}), 0)
			if got := len(drainBuffer(b)); got != 1 {
				t.Fatalf("mode %d: delivered %d entries of one", mode, got)
			}
		}
		var caps []int
		switch b := b.(type) {
		case *coalescingBuffer[*obj]:
			caps = []int{b.keys.Cap(), cap(b.unfolded)}
		case *orderedBuffer[*obj]:
			caps = []int{b.notes.Cap()}
		}
		for _, c := range caps {
			if c > ringKeep {
				t.Fatalf("mode %d: a ring still holds %d slots after draining", mode, c)
			}
		}
	}
}

// A handler's buffer gives back the initial list's burst once it has
// delivered it: a quiet informer does not keep, for ever, rings sized
// for its whole cache (a patient ring alone would wait for a window of
// traffic that may never come).
func TestBuffersTrimAfterTheInitialList(t *testing.T) {
	for _, mode := range []DeliveryMode{Coalesce, InOrder} {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, Options[*corev1.ConfigMap]{Delivery: mode})
			for i := range 3000 {
				e.create(t, fmt.Sprint("cm-", i))
			}
			var calls atomic.Int64
			reg, err := e.inf.AddHandler(HandlerFuncs[*corev1.ConfigMap]{
				AddFunc: func(*corev1.ConfigMap, bool) { calls.Add(1) },
			}, HandlerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			runSynced(t, e.inf, nil)
			if calls.Load() != 3000 || !reg.HasSynced() {
				t.Fatalf("mode %d: %d adds, synced %v", mode, calls.Load(), reg.HasSynced())
			}
			var caps []int
			reg.l.mu.Lock()
			switch b := reg.l.buf.(type) {
			case *coalescingBuffer[*corev1.ConfigMap]:
				caps = []int{b.keys.Cap()}
			case *orderedBuffer[*corev1.ConfigMap]:
				caps = []int{b.notes.Cap(), b.runs.Cap()}
			}
			reg.l.mu.Unlock()
			for _, c := range caps {
				if c > ringKeep {
					t.Fatalf("mode %d: a ring holds %d slots after the initial list", mode, c)
				}
			}
		})
	}
}
