package deltafifo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPagedReplaceDeletesOnlyWhatNothingMentioned(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		k := newKnown(mk("ns", "known-kept", 1), mk("ns", "known-gone", 2), mk("ns", "known-written", 3))
		f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: inOrder})
		mustOK(t, f.Add(mk("ns", "queued-gone", 4)))
		mustOK(t, f.Add(mk("ns", "queued-kept", 5)))
		mustOK(t, f.Add(mk("ns", "popped-gone", 6)))
		// popped-gone reaches the store before the list begins.
		got := []string{popOne(t, f, k)}
		mustOK(t, f.ReplacePage([]obj{mk("ns", "queued-kept", 10), mk("ns", "known-kept", 10)}, true))
		// The consumer takes the first page's keys while the list goes on.
		got = append(got, popOne(t, f, k), popOne(t, f, k))
		// A write during the list counts as seen.
		mustOK(t, f.Update(mk("ns", "known-written", 11)))
		mustOK(t, f.ReplacePage([]obj{mk("ns", "new", 10)}, false))
		mustOK(t, f.ReplaceEnd("10"))
		got = append(got, popAll(t, f, k)...)
		slices.Sort(got)
		// The first two pops took queued-gone (coalescing: also
		// queued-kept, with its listed version) before the list ended, so
		// its deletion comes from the store.
		want := []string{
			"ns/known-gone: Deleted?:ns/known-gone@2",
			"ns/known-kept: Replaced:ns/known-kept@10",
			"ns/known-written: Updated:ns/known-written@11",
			"ns/new: Replaced:ns/new@10",
			"ns/popped-gone: Added:ns/popped-gone@6",
			"ns/popped-gone: Deleted?:ns/popped-gone@6",
			"ns/queued-gone: Added:ns/queued-gone@4",
			"ns/queued-gone: Deleted?:ns/queued-gone@4",
			"ns/queued-kept: Added:ns/queued-kept@5",
			"ns/queued-kept: Replaced:ns/queued-kept@10",
		}
		if !inOrder {
			want = slices.DeleteFunc(want, func(s string) bool { return strings.HasPrefix(s, "ns/queued-kept") })
			want = append(want, "ns/queued-kept: Added:ns/queued-kept@5 Replaced:ns/queued-kept@10")
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("inOrder=%v: popped\n  %s\nwant\n  %s", inOrder, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		if keys := k.ListKeys(); !slices.Equal(keys, []string{"ns/known-kept", "ns/known-written", "ns/new", "ns/queued-kept"}) {
			t.Errorf("inOrder=%v: store holds %v", inOrder, keys)
		}
	}
}

// popOne pops one key (event) and applies it to k, like an informer.
func popOne(t *testing.T, f *FIFO[obj], k *known) string {
	t.Helper()
	var line string
	mustOK(t, f.Pop(t.Context(), func(key string, ds []Delta[obj], _ bool) error {
		line = key + ": " + fmtDeltas(ds)
		k.apply(key, ds)
		return nil
	}))
	return line
}

func TestPagedReplaceFirstPageAbandonsAnUnfinishedList(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		k := newKnown()
		f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: inOrder})
		mustOK(t, f.ReplacePage([]obj{mk("ns", "a", 1), mk("ns", "b", 1)}, true))
		popOne(t, f, k) // ns/a reaches the store
		mustOK(t, f.ReplacePage([]obj{mk("ns", "c", 1)}, false))
		// The list is restarted and this time holds only b.
		mustOK(t, f.ReplacePage([]obj{mk("ns", "b", 2)}, true))
		mustOK(t, f.ReplaceEnd("2"))
		popAll(t, f, k)
		if keys := k.ListKeys(); !slices.Equal(keys, []string{"ns/b"}) {
			t.Errorf("inOrder=%v: store holds %v, want [ns/b]", inOrder, keys)
		}
	}
}

func TestPagedInitialListSyncsAfterItsEndAndEveryKey(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		for _, endFirst := range []bool{false, true} {
			k := newKnown()
			f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: inOrder})
			mustOK(t, f.ReplacePage([]obj{mk("ns", "a", 1), mk("ns", "b", 1)}, true))
			var initial []bool
			pop := func() {
				mustOK(t, f.Pop(t.Context(), func(key string, ds []Delta[obj], isInitial bool) error {
					initial = append(initial, isInitial)
					k.apply(key, ds)
					return nil
				}))
			}
			pop()
			mustOK(t, f.ReplacePage([]obj{mk("ns", "c", 1)}, false))
			if endFirst {
				mustOK(t, f.ReplaceEnd("1"))
			}
			pop()
			pop()
			if f.HasSynced() != endFirst {
				t.Errorf("inOrder=%v endFirst=%v: HasSynced = %v after every key", inOrder, endFirst, !endFirst)
			}
			if !endFirst {
				mustOK(t, f.ReplaceEnd("1"))
			}
			if !f.HasSynced() {
				t.Errorf("inOrder=%v endFirst=%v: not synced after the end and every key", inOrder, endFirst)
			}
			mustOK(t, f.Add(mk("ns", "d", 2)))
			pop()
			if want := []bool{true, true, true, false}; !equalBools(initial, want) {
				t.Errorf("inOrder=%v endFirst=%v: isInInitialList = %v, want %v", inOrder, endFirst, initial, want)
			}
		}
	}
}

func TestPagedReplaceRefusesABadPageWhole(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	err := f.ReplacePage([]obj{mk("ns", "a", 1), nil}, true)
	if !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("ReplacePage with a nil object: %v, want ErrInvalidObject", err)
	}
	if f.Len() != 0 {
		t.Fatalf("a refused page queued %d keys", f.Len())
	}
}

func TestWaitLenWaitsForTheConsumer(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	mustOK(t, f.ReplacePage([]obj{mk("ns", "a", 1), mk("ns", "b", 1), mk("ns", "c", 1)}, true))
	mustOK(t, f.WaitLen(t.Context(), 3)) // already there
	done := make(chan error, 1)
	go func() { done <- f.WaitLen(t.Context(), 1) }()
	select {
	case err := <-done:
		t.Fatalf("WaitLen(1) returned with 3 queued: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	mustOK(t, f.Pop(t.Context(), func(string, []Delta[obj], bool) error { return nil }))
	mustOK(t, f.PopBatch(t.Context(), func([]Item[obj], bool) error { return nil }))
	select {
	case err := <-done:
		mustOK(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("WaitLen(1) still waiting with the queue empty")
	}
	// Close and a cancelled context end a wait too.
	mustOK(t, f.ReplacePage([]obj{mk("ns", "a", 2), mk("ns", "b", 2)}, false))
	ctx, cancel := context.WithCancel(t.Context())
	go func() { done <- f.WaitLen(ctx, 0) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("WaitLen after cancel: %v", err)
	}
	go func() { done <- f.WaitLen(t.Context(), 0) }()
	f.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("WaitLen after Close: %v", err)
	}
}
