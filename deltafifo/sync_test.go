package deltafifo

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

func TestHasSyncedOnlyAfterEveryInitialItemIsProcessed(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		k := newKnown(mk("ns", "stale", 1))
		f := newFIFO(t, Options[obj]{KnownObjects: k, InOrder: inOrder})
		mustOK(t, f.Replace([]obj{mk("ns", "a", 2), mk("ns", "b", 2)}, "2"))
		// Queued after the initial list: not part of it.
		mustOK(t, f.Add(mk("ns", "c", 3)))
		var initial []bool
		for range 3 {
			if f.HasSynced() {
				t.Fatalf("inOrder=%v: synced after %d of 3 initial pops", inOrder, len(initial))
			}
			mustOK(t, f.Pop(t.Context(), func(_ string, _ []Delta[obj], isInitial bool) error {
				if f.c.syncedClosed {
					t.Error("synced while the last initial item is still being processed")
				}
				initial = append(initial, isInitial)
				return nil
			}))
		}
		if !f.HasSynced() {
			t.Fatalf("inOrder=%v: not synced after the initial list", inOrder)
		}
		select {
		case <-f.Synced():
		default:
			t.Fatal("Synced channel still open")
		}
		mustOK(t, f.Pop(t.Context(), func(_ string, _ []Delta[obj], isInitial bool) error {
			initial = append(initial, isInitial)
			return nil
		}))
		if want := []bool{true, true, true, false}; !equalBools(initial, want) {
			t.Fatalf("inOrder=%v: isInInitialList = %v, want %v", inOrder, initial, want)
		}
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHasSyncedAtOnceWhenWritesComeFirst(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	if f.HasSynced() {
		t.Fatal("synced before anything happened")
	}
	mustOK(t, f.Add(mk("ns", "a", 1)))
	if !f.HasSynced() {
		t.Fatal("Add before Replace should sync at once")
	}
}

func TestEmptyInitialReplaceSyncsAtOnce(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	mustOK(t, f.Replace(nil, "1"))
	if !f.HasSynced() {
		t.Fatal("empty first Replace should sync at once")
	}
}

func TestPopBlocksUntilAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(t.Context(), Options[obj]{})
		defer f.Close()
		got := make(chan string, 1)
		go func() {
			_ = f.Pop(t.Context(), func(key string, _ []Delta[obj], _ bool) error {
				got <- key
				return nil
			})
		}()
		synctest.Wait()
		select {
		case k := <-got:
			t.Fatalf("Pop returned %q from an empty queue", k)
		default:
		}
		mustOK(t, f.Add(mk("ns", "a", 1)))
		synctest.Wait()
		if k := <-got; k != "ns/a" {
			t.Fatalf("popped %q", k)
		}
	})
}

func TestCloseUnblocksPopAfterDraining(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			f := New(t.Context(), Options[obj]{InOrder: inOrder})
			mustOK(t, f.Add(mk("ns", "a", 1)))
			f.Close()
			if !f.IsClosed() {
				t.Fatal("IsClosed = false after Close")
			}
			if err := f.Add(mk("ns", "b", 1)); !errors.Is(err, ErrClosed) {
				t.Fatalf("Add after Close: %v, want ErrClosed", err)
			}
			if err := f.Replace(nil, ""); !errors.Is(err, ErrClosed) {
				t.Fatalf("Replace after Close: %v, want ErrClosed", err)
			}
			if err := f.Resync(); !errors.Is(err, ErrClosed) {
				t.Fatalf("Resync after Close: %v, want ErrClosed", err)
			}
			popped := 0
			process := func(string, []Delta[obj], bool) error { popped++; return nil }
			mustOK(t, f.Pop(t.Context(), process))
			errc := make(chan error, 2)
			go func() { errc <- f.Pop(t.Context(), process) }()
			go func() { errc <- f.PopBatch(t.Context(), func([]Item[obj], bool) error { return nil }) }()
			synctest.Wait()
			for range 2 {
				if err := <-errc; !errors.Is(err, ErrClosed) {
					t.Fatalf("Pop after Close: %v, want ErrClosed", err)
				}
			}
			if popped != 1 {
				t.Fatalf("popped %d, want the 1 item queued before Close", popped)
			}
		})
	}
}

func TestCloseWakesBlockedPop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(t.Context(), Options[obj]{})
		errc := make(chan error, 1)
		go func() {
			errc <- f.Pop(t.Context(), func(string, []Delta[obj], bool) error { return nil })
		}()
		synctest.Wait()
		f.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("Pop = %v, want ErrClosed", err)
		}
	})
}

func TestPopReturnsWhenContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(t.Context(), Options[obj]{InOrder: true})
		defer f.Close()
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			errc <- f.Pop(ctx, func(string, []Delta[obj], bool) error { return nil })
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Pop = %v, want context.Canceled", err)
		}
		// The FIFO still works after an abandoned Pop.
		mustOK(t, f.Add(mk("ns", "a", 1)))
		mustOK(t, f.Pop(t.Context(), func(string, []Delta[obj], bool) error { return nil }))
	})
}

func TestPopReturnsProcessError(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	mustOK(t, f.Add(mk("ns", "a", 1)))
	err := f.Pop(t.Context(), func(string, []Delta[obj], bool) error { return errBoom })
	if !errors.Is(err, errBoom) {
		t.Fatalf("Pop = %v, want the process error", err)
	}
	if f.Len() != 0 {
		t.Fatal("a failed process requeued the item")
	}
}
