package deltafifo

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"k8s.io/client-go/tools/cache"
)

// TestInOrderMatchesClientGoRealFIFO applies the same seeded random sequence
// of Add/Update/Delete/Replace/Resync/Pop/PopBatch to client-go's RealFIFO
// (non-atomic, the mode that takes KnownObjects) and to a typed in-order
// FIFO, and requires identical pops (deep comparison of the deltas, with
// FinalStateUnknown mapped to cache.DeletedFinalStateUnknown), errors and
// HasSynced after every step. RealFIFO requires KnownObjects; "without"
// means a store that starts empty and is never updated.
func TestInOrderMatchesClientGoRealFIFO(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 20
	}
	for _, withKnown := range []bool{false, true} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("known=%v/seed=%d", withKnown, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					runRealFIFODiff(t, uint64(seed), withKnown)
				})
			})
		}
	}
}

// realFIFOPair is the two queues under comparison and their known stores;
// the known stores are nil when not tracking pops.
type realFIFOPair struct {
	ref       *cache.RealFIFO
	ours      *FIFO[obj]
	refKnown  *cacheKnownStore
	oursKnown *known
}

func newRealFIFOPair(t *testing.T, seed uint64, withKnown bool) *realFIFOPair {
	p := &realFIFOPair{}
	refKnown, oursKnown := newCacheKnown(), newKnown()
	if withKnown {
		p.refKnown, p.oursKnown = refKnown, oursKnown
	}
	refOpts := cache.RealFIFOOptions{KnownObjects: refKnown}
	oursOpts := Options[obj]{InOrder: true, KnownObjects: oursKnown, MaxBatch: 1000}
	if seed%2 == 1 {
		refOpts.Transformer, oursOpts.Transform = cacheTransform, typedTransform
	}
	p.ref = cache.NewRealFIFOWithOptions(refOpts)
	p.ours = New(t.Context(), oursOpts)
	t.Cleanup(p.ref.Close)
	t.Cleanup(p.ours.Close)
	return p
}

func runRealFIFODiff(t *testing.T, seed uint64, withKnown bool) {
	rng := rand.New(rand.NewPCG(seed, 11))
	g := &objGen{rng: rng}
	p := newRealFIFOPair(t, seed, withKnown)
	if withKnown && seed%3 == 0 {
		for range 3 {
			o := g.next()
			key, _ := cache.MetaNamespaceKeyFunc(o)
			p.refKnown.objs[key] = o
			p.oursKnown.set(o.DeepCopy())
		}
	}
	for step := range 150 {
		label := fmt.Sprintf("step %d", step)
		r := rng.IntN(100)
		if step == 0 && seed%4 < 2 {
			r = 55
		}
		switch {
		case r < 20:
			o := g.next()
			sameErr(t, label+" Add", p.ref.Add(o), p.ours.Add(o.DeepCopy()))
		case r < 38:
			o := g.next()
			sameErr(t, label+" Update", p.ref.Update(o), p.ours.Update(o.DeepCopy()))
		case r < 50:
			o := g.next()
			sameErr(t, label+" Delete", p.ref.Delete(o), p.ours.Delete(o.DeepCopy()))
		case r < 60:
			list := g.list()
			ourList := make([]obj, len(list))
			for i, o := range list {
				ourList[i] = o.DeepCopy()
			}
			sameErr(t, label+" Replace", p.ref.Replace(anyList(list), "rv"), p.ours.Replace(ourList, "rv"))
		case r < 65:
			sameErr(t, label+" Resync", p.ref.Resync(), p.ours.Resync())
		case r < 80:
			p.popBoth(t, label, true)
		default:
			p.popBoth(t, label, false)
		}
		if a, b := p.ref.HasSynced(), p.ours.HasSynced(); a != b {
			t.Fatalf("%s: HasSynced client-go=%v ours=%v", label, a, b)
		}
	}
	for p.ours.Len() > 0 {
		p.popBoth(t, "drain", rng.IntN(2) == 0)
	}
	if _, ok := refPop(t, p.refPopper(false)); ok {
		t.Fatal("client-go still had items after ours was drained")
	}
}

func (p *realFIFOPair) refPopper(batch bool) func(func([]cache.Delta, bool)) error {
	return func(record func([]cache.Delta, bool)) error {
		single := func(item any, initial bool) error {
			ds := item.(cache.Deltas)
			record(ds, initial)
			if p.refKnown != nil {
				p.refKnown.apply(ds)
			}
			return nil
		}
		if !batch {
			_, err := p.ref.Pop(single)
			return err
		}
		return p.ref.PopBatch(func(ds []cache.Delta, initial bool) error {
			return single(cache.Deltas(ds), initial)
		}, single)
	}
}

// popBoth pops one event (or one batch) from both queues, if ours has any,
// and compares.
func (p *realFIFOPair) popBoth(t *testing.T, label string, batch bool) {
	t.Helper()
	if p.ours.Len() == 0 {
		return
	}
	want, ok := refPop(t, p.refPopper(batch))
	if !ok {
		t.Fatalf("%s: client-go queue empty, ours not", label)
	}
	var got popped
	record := func(key string, ds []Delta[obj], initial bool) {
		got.Deltas = append(got.Deltas, toCache(key, ds)...)
		got.Initial = initial
		if p.oursKnown != nil {
			p.oursKnown.apply(key, ds)
		}
	}
	if batch {
		got.Err = p.ours.PopBatch(t.Context(), func(items []Item[obj], initial bool) error {
			for _, it := range items {
				record(it.Key, it.Deltas, initial)
			}
			return nil
		})
	} else {
		got.Err = p.ours.Pop(t.Context(), func(key string, ds []Delta[obj], initial bool) error {
			record(key, ds, initial)
			return nil
		})
	}
	comparePops(t, label, got, want)
}
