package workqueue

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// misuseRecorder collects OnMisuse reports.
type misuseRecorder struct {
	mu    sync.Mutex
	kinds []MisuseKind
}

func (r *misuseRecorder) record(k MisuseKind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds = append(r.kinds, k)
}

func (r *misuseRecorder) take() []MisuseKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.kinds
	r.kinds = nil
	return k
}

func TestDoneForItemNotProcessingChangesNothing(t *testing.T) {
	rec := &misuseRecorder{}
	q := newTestQueue(t, Options[string]{OnMisuse: rec.record})
	q.Done("never-added")
	q.Add("a")
	q.Done("a") // queued, not handed out: client-go would queue a second copy
	if q.Len() != 1 {
		t.Fatalf("Len = %d, want 1", q.Len())
	}
	item, _ := q.Get()
	q.Done(item)
	q.Done(item) // twice
	if q.Len() != 0 {
		t.Fatalf("Len = %d, want 0", q.Len())
	}
	want := []MisuseKind{MisuseDoneNotProcessing, MisuseDoneNotProcessing, MisuseDoneNotProcessing}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Fatalf("misuses = %v, want %v", got, want)
	}
}

func TestAddsAfterShutDownAreRejectedAndReported(t *testing.T) {
	rec := &misuseRecorder{}
	q := newTestQueue(t, Options[string]{OnMisuse: rec.record})
	q.Add("kept")
	q.ShutDown()
	q.Add("a")
	q.AddAfter("b", time.Second)
	q.AddRateLimited("c")
	if err := q.AddWithOptions("d", AddOptions{Priority: 1}); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("AddWithOptions after shutdown: err = %v, want ErrShuttingDown", err)
	}
	if got := rec.take(); len(got) != 4 || got[0] != MisuseAddAfterShutDown {
		t.Fatalf("misuses = %v, want 4 × AddAfterShutDown", got)
	}
	if item, down := q.Get(); item != "kept" || down {
		t.Fatalf("Get = %q, %v; the item queued before shutdown must not be lost", item, down)
	}
	q.Done("kept")
	if _, down := q.Get(); !down {
		t.Fatal("Get did not report shutdown")
	}
}

func TestNegativeDelayIsImmediate(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddAfter("a", -time.Hour)
	mustAdd(t, q, "b", AddOptions{After: -1})
	if q.Len() != 2 {
		t.Fatalf("Len = %d, want 2", q.Len())
	}
}

func TestHugeDelaySaturates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		time.Sleep(time.Second)
		q.AddAfter("a", time.Duration(1<<63-1))
		q.AddAfter("b", time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		expectOrder(t, getAll(q), "b")
	})
}

func TestRepeatedAndMixedShutDowns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.Add("a")
		item, _ := q.Get()
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait()
		q.ShutDown() // ends the drain wait without Done
		<-drained
		q.ShutDown()
		q.Done(item)
		q.ShutDownWithDrain() // nothing in flight any more: returns at once
	})
}

func TestMisuseKindString(t *testing.T) {
	for k, want := range map[MisuseKind]string{
		MisuseAddAfterShutDown:  "AddAfterShutDown",
		MisuseDoneNotProcessing: "DoneNotProcessing",
		0:                       "Unknown",
	} {
		if k.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(k), k.String(), want)
		}
	}
}
