package workqueue

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// stackQueue is a custom Queue for client-go's TypedQueueConfig: last in,
// first out (so that its use shows in the order), recording every Push,
// Touch and Pop. dup makes Push store each item twice, like a broken queue.
type stackQueue struct {
	items []string
	trace []string
	dup   bool
}

func (s *stackQueue) Touch(item string) { s.trace = append(s.trace, "touch "+item) }
func (s *stackQueue) Push(item string) {
	s.trace = append(s.trace, "push "+item)
	s.items = append(s.items, item)
	if s.dup {
		s.items = append(s.items, item)
	}
}
func (s *stackQueue) Len() int { return len(s.items) }
func (s *stackQueue) Pop() string {
	item := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	s.trace = append(s.trace, "pop "+item)
	return item
}

// The drop-in stores ready items in the custom Queue of TypedQueueConfig and
// calls it exactly as client-go does (the same script gives the same trace
// and the same hand-outs with both): a re-add of a waiting item Touches it,
// an add while processing is held back until Done Pushes it, and the
// order is the custom Queue's (here last in, first out). It used to be
// ignored.
func TestCustomQueueIsUsed(t *testing.T) {
	ctors := map[string]func(cgworkqueue.TypedQueueConfig[string]) cgworkqueue.TypedInterface[string]{
		"listwatch": func(c cgworkqueue.TypedQueueConfig[string]) cgworkqueue.TypedInterface[string] {
			return NewTypedWithConfig(c)
		},
		"client-go": func(c cgworkqueue.TypedQueueConfig[string]) cgworkqueue.TypedInterface[string] {
			return cgworkqueue.NewTypedWithConfig(c)
		},
	}
	for name, newQ := range ctors {
		t.Run(name, func(t *testing.T) {
			// In a bubble, a Get that would wait for ever fails the test at once.
			synctest.Test(t, func(t *testing.T) {
				sq := &stackQueue{}
				q := newQ(cgworkqueue.TypedQueueConfig[string]{Queue: sq})
				defer q.ShutDown()
				var got []string
				get := func() string {
					item, shutdown := q.Get()
					if shutdown {
						t.Fatal("Get reported shutdown")
					}
					got = append(got, item)
					return item
				}
				q.Add("a")
				q.Add("b")
				q.Add("a") // waiting: touched, not pushed again
				b := get()
				q.Add("b") // processing: held back until Done
				q.Add("b")
				q.Add("c")
				c := get()
				q.Done(b) // pushes b again
				if n := q.Len(); n != 2 {
					t.Errorf("Len = %d, want 2 (a and b in the custom queue)", n)
				}
				q.Done(get())
				q.Done(c)
				q.Done(get())
				if n := q.Len(); n != 0 {
					t.Errorf("Len = %d, want 0", n)
				}
				if want := []string{"b", "c", "b", "a"}; !slices.Equal(got, want) {
					t.Errorf("handed out %v, want %v", got, want)
				}
				want := []string{"push a", "push b", "touch a", "pop b", "push c", "pop c", "push b", "pop b", "pop a"}
				if !slices.Equal(sq.trace, want) {
					t.Errorf("custom queue calls %v, want %v", sq.trace, want)
				}
			})
		})
	}
}

// client-go's TestCollapse, on the drop-in: an item added twice is touched,
// handed out once, and the queue is then empty.
func TestCustomQueueCollapse(t *testing.T) {
	sq := &stackQueue{}
	q := NewTypedWithConfig(cgworkqueue.TypedQueueConfig[string]{Queue: sq})
	defer q.ShutDown()
	q.Add("bar")
	q.Add("bar")
	if item, _ := q.Get(); item != "bar" {
		t.Fatalf("Get = %q, want bar", item)
	}
	q.Done("bar")
	if n := q.Len(); n != 0 {
		t.Fatalf("Len = %d, want 0", n)
	}
	if want := []string{"push bar", "touch bar", "pop bar"}; !slices.Equal(sq.trace, want) {
		t.Fatalf("custom queue calls %v, want %v", sq.trace, want)
	}
}

// A custom Queue that hands an item back twice cannot make the drop-in hand
// it out twice: the second copy is skipped, and Get waits for real work.
func TestCustomQueueDuplicatesAreSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sq := &stackQueue{dup: true}
		q := NewTypedWithConfig(cgworkqueue.TypedQueueConfig[string]{Queue: sq})
		q.Add("a")
		if item, _ := q.Get(); item != "a" {
			t.Fatalf("Get = %q, want a", item)
		}
		got := make(chan string, 1)
		go func() {
			item, shutdown := q.Get()
			got <- fmt.Sprintf("%s %v", item, shutdown)
		}()
		synctest.Wait()
		select {
		case g := <-got:
			t.Fatalf("second Get returned %q while a is processing", g)
		default:
		}
		q.Add("b")
		if g := <-got; g != "b false" {
			t.Fatalf("second Get = %q, want b", g)
		}
		q.ShutDown()
		if want := []string{"push a", "pop a", "pop a", "push b", "pop b"}; !slices.Equal(sq.trace, want) {
			t.Fatalf("custom queue calls %v, want %v", sq.trace, want)
		}
	})
}
