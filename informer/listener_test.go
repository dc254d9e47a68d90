package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// obj is a minimal object for listener tests: a key and a version.
type obj struct {
	key string
	ver int
}

func (o *obj) String() string { return fmt.Sprintf("%s@%d", o.key, o.ver) }

// recorder records handler calls as strings, optionally blocking on gate.
type recorder struct {
	mu    sync.Mutex
	calls []string
	gate  chan struct{} // when non-nil, each call waits for a token
}

func (r *recorder) rec(s string) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recorder) OnAdd(o *obj, initial bool) {
	r.rec(fmt.Sprintf("add %v initial=%v", o, initial))
}
func (r *recorder) OnUpdate(old, new *obj) { r.rec(fmt.Sprintf("update %v -> %v", old, new)) }
func (r *recorder) OnDelete(o *obj, unknown bool) {
	r.rec(fmt.Sprintf("delete %v unknown=%v", o, unknown))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func add(o *obj) *notification[*obj] {
	return &notification[*obj]{kind: noteAdded, Key: o.key, Object: o}
}
func upd(old, new *obj) *notification[*obj] {
	return &notification[*obj]{kind: noteUpdated, Key: new.key, Object: new, Old: old}
}
func del(o *obj, unknown bool) *notification[*obj] {
	return &notification[*obj]{kind: noteDeleted, Key: o.key, Object: o, FinalStateUnknown: unknown}
}
func syn(o *obj) *notification[*obj] {
	return &notification[*obj]{kind: noteResynced, Key: o.key, Object: o}
}

// startListener runs a listener inside the current synctest bubble and
// stops it at the end of the test.
func startListener(t *testing.T, h Handler[*obj], mode DeliveryMode) *listener[*obj] {
	l := newListener[*obj](h, listenerOptions{Mode: mode})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

var (
	a1, a2, a3 = &obj{"a", 1}, &obj{"a", 2}, &obj{"a", 3}
	b1, b2     = &obj{"b", 1}, &obj{"b", 2}
	c1         = &obj{"c", 1}
)

// With no lag, every notification reaches the handler as it was sent.
func TestListenerNoLagDeliversEverything(t *testing.T) {
	for _, mode := range []DeliveryMode{Coalesce, InOrder} {
		synctest.Test(t, func(t *testing.T) {
			r := &recorder{}
			l := startListener(t, r, mode)
			var got []string
			for _, n := range []*notification[*obj]{add(a1), upd(a1, a2), syn(a2), del(a2, false), add(a3), del(a3, true)} {
				l.add(n)
				synctest.Wait()
				got = append(got, r.take()...)
			}
			want := []string{"add a@1 initial=false", "update a@1 -> a@2", "update a@2 -> a@2",
				"delete a@2 unknown=false", "add a@3 initial=false", "delete a@3 unknown=true"}
			if !slices.Equal(got, want) {
				t.Fatalf("mode %d:\ngot  %q\nwant %q", mode, got, want)
			}
		})
	}
}

// A lagging handler in Coalesce mode sees each key's newest state, keys in
// the order they first became pending.
func TestListenerCoalescesWhileLagging(t *testing.T) {
	cases := []struct {
		name  string
		seen  []*notification[*obj] // delivered before the handler stalls
		lag   []*notification[*obj] // queued while it is stalled
		wantQ int                   // pending keys while stalled
		want  []string
	}{
		{"updates fold into one, old is what the handler saw",
			[]*notification[*obj]{add(a1)}, []*notification[*obj]{upd(a1, a2), upd(a2, a3)}, 1,
			[]string{"update a@1 -> a@3"}},
		{"add then updates is one add of the newest",
			nil, []*notification[*obj]{add(a1), upd(a1, a2), syn(a2)}, 1,
			[]string{"add a@2 initial=false"}},
		{"born and gone while lagging is never shown",
			nil, []*notification[*obj]{add(a1), upd(a1, a2), del(a2, false), add(b1)}, 2,
			[]string{"add b@1 initial=false"}},
		{"delete then re-create stays a delete and an add",
			[]*notification[*obj]{add(a1)}, []*notification[*obj]{del(a1, false), add(a2), upd(a2, a3)}, 1,
			[]string{"delete a@1 unknown=false", "add a@3 initial=false"}},
		{"update then delete is a delete of the final state",
			[]*notification[*obj]{add(a1)}, []*notification[*obj]{upd(a1, a2), del(a2, true)}, 1,
			[]string{"delete a@2 unknown=true"}},
		{"keys keep first-arrival order",
			[]*notification[*obj]{add(a1), add(b1)}, []*notification[*obj]{upd(b1, b2), add(c1), upd(a1, a2)}, 3,
			[]string{"update b@1 -> b@2", "add c@1 initial=false", "update a@1 -> a@2"}},
		{"a resync alone is an update to itself",
			[]*notification[*obj]{add(a1)}, []*notification[*obj]{syn(a1), syn(a1)}, 1,
			[]string{"update a@1 -> a@1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &recorder{gate: make(chan struct{})}
				l := startListener(t, r, Coalesce)
				for _, n := range tc.seen {
					l.add(n)
					r.gate <- struct{}{}
				}
				synctest.Wait()
				r.take()
				// The handler is now idle: queue everything in one batch,
				// under one lock, so that the listener cannot take the
				// first notification alone (it would then block in that
				// call and the rest would make a second entry).
				lag := make([]notification[*obj], len(tc.lag))
				for i, n := range tc.lag {
					lag[i] = *n
				}
				st := stamp{clock: l.clock}
				l.addBatch(lag, true, &st)
				if got := l.stats().Pending; got != tc.wantQ {
					t.Errorf("pending = %d, want %d", got, tc.wantQ)
				}
				close(r.gate)
				synctest.Wait()
				if got := r.take(); !slices.Equal(got, tc.want) {
					t.Fatalf("\ngot  %q\nwant %q", got, tc.want)
				}
			})
		})
	}
}

// Under random changes and random stalls, a coalescing handler's view always
// ends equal to the source's, and every call is consistent with what the
// handler saw before: adds only for absent keys, updates and deletes only
// for present ones, updates carrying the object it saw.
func TestListenerCoalescingConvergesRandomly(t *testing.T) {
	for seed := range uint64(200) {
		synctest.Test(t, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			h := &viewHandler{t: t, view: map[string]*obj{}, gate: make(chan struct{})}
			l := startListener(t, h, Coalesce)
			src := map[string]*obj{}
			ver := 0
			for range 300 {
				key := string(rune('a' + rnd.IntN(6)))
				ver++
				cur, ok := src[key]
				switch {
				case !ok:
					src[key] = &obj{key, ver}
					l.add(add(src[key]))
				case rnd.IntN(4) == 0:
					delete(src, key)
					l.add(del(cur, rnd.IntN(3) == 0))
				case rnd.IntN(5) == 0:
					l.add(syn(cur))
				default:
					src[key] = &obj{key, ver}
					l.add(upd(cur, src[key]))
				}
				for range rnd.IntN(3) { // let the handler take a few entries
					select {
					case h.gate <- struct{}{}:
					default:
					}
					synctest.Wait()
				}
			}
			close(h.gate)
			synctest.Wait()
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.view) != len(src) {
				t.Fatalf("seed %d: view has %d keys, source %d", seed, len(h.view), len(src))
			}
			for k, o := range src {
				if h.view[k] != o {
					t.Fatalf("seed %d: key %s: view %v, source %v", seed, k, h.view[k], o)
				}
			}
		})
	}
}

type viewHandler struct {
	t    *testing.T
	mu   sync.Mutex
	view map[string]*obj
	gate chan struct{}
}

func (h *viewHandler) wait() {
	<-h.gate
	h.mu.Lock()
}

func (h *viewHandler) OnAdd(o *obj, _ bool) {
	h.wait()
	defer h.mu.Unlock()
	if h.view[o.key] != nil {
		h.t.Errorf("add %v for a key the handler has (%v)", o, h.view[o.key])
	}
	h.view[o.key] = o
}

func (h *viewHandler) OnUpdate(old, new *obj) {
	h.wait()
	defer h.mu.Unlock()
	if h.view[new.key] != old {
		h.t.Errorf("update %v -> %v but the handler has %v", old, new, h.view[new.key])
	}
	h.view[new.key] = new
}

func (h *viewHandler) OnDelete(o *obj, _ bool) {
	h.wait()
	defer h.mu.Unlock()
	if h.view[o.key] == nil {
		h.t.Errorf("delete %v for a key the handler does not have", o)
	}
	delete(h.view, o.key)
}

// A stalled handler delays neither the sender nor another listener.
func TestSlowListenerDelaysNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &recorder{gate: make(chan struct{})}
		fast := &recorder{}
		ls, lf := startListener(t, slow, Coalesce), startListener(t, fast, Coalesce)
		for i := range 1000 {
			n := add(&obj{fmt.Sprint(i), 1})
			ls.add(n) // returns at once although the handler is stuck
			lf.add(n)
		}
		synctest.Wait()
		if got := len(fast.take()); got != 1000 {
			t.Fatalf("fast handler got %d notifications, want 1000", got)
		}
		time.Sleep(3 * time.Second)
		st := ls.stats()
		if st.Pending != 999 || st.OldestPending != 3*time.Second || st.Busy != 3*time.Second {
			t.Fatalf("slow listener stats = %+v, want 999 pending (one in the handler), 3s old, busy 3s", st)
		}
		close(slow.gate)
		synctest.Wait()
		if got := len(slow.take()); got != 1000 {
			t.Fatalf("slow handler got %d notifications, want 1000", got)
		}
	})
}

type panicky struct{ recorder }

func (p *panicky) OnAdd(o *obj, initial bool) {
	if o.key == "b" {
		panic("boom")
	}
	p.recorder.OnAdd(o, initial)
}

// A panicking handler is recovered and its listener carries on.
func TestListenerRecoversPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &panicky{}
		l := startListener(t, p, Coalesce)
		l.add(add(a1))
		l.add(add(b1))
		l.add(add(c1))
		synctest.Wait()
		if got, want := p.take(), []string{"add a@1 initial=false", "add c@1 initial=false"}; !slices.Equal(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
		if st := l.stats(); st.Panics != 1 || st.Processed != 3 {
			t.Fatalf("stats = %+v, want 1 panic, 3 processed", st)
		}
	})
}

// hasSynced turns true once the initial list has reached the handler, even
// when later changes keep arriving.
func TestListenerHasSynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{gate: make(chan struct{})}
		l := startListener(t, r, Coalesce)
		initial := func(o *obj) *notification[*obj] { n := add(o); n.InInitialList = true; return n }
		l.add(initial(a1))
		l.add(initial(b1))
		l.markInitial()
		l.add(add(c1))
		if l.hasSynced() {
			t.Fatal("synced before anything was delivered")
		}
		r.gate <- struct{}{}
		synctest.Wait()
		if l.hasSynced() {
			t.Fatal("synced after one of two initial items")
		}
		r.gate <- struct{}{}
		synctest.Wait()
		if !l.hasSynced() {
			t.Fatal("not synced after the initial items")
		}
		close(r.gate)
		synctest.Wait()
		if got := strings.Join(r.take(), ","); got != "add a@1 initial=true,add b@1 initial=true,add c@1 initial=false" {
			t.Fatalf("calls = %s", got)
		}
	})
}
