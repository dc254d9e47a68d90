package deltafifo

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"k8s.io/client-go/tools/cache"
)

// TestDropInMatchesClientGoDeltaFIFO applies the same seeded random
// sequence of Add/Update/Delete/Replace/Resync/Pop to client-go's DeltaFIFO
// and to the drop-in, and requires identical pops (deep comparison of the
// cache.Deltas), errors and HasSynced after every step.
func TestDropInMatchesClientGoDeltaFIFO(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 20
	}
	for _, withKnown := range []bool{false, true} {
		for _, emitReplaced := range []bool{false, true} {
			for seed := range seeds {
				name := fmt.Sprintf("known=%v/replaced=%v/seed=%d", withKnown, emitReplaced, seed)
				t.Run(name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						runDeltaFIFODiff(t, uint64(seed), withKnown, emitReplaced)
					})
				})
			}
		}
	}
}

// deltaFIFOPair is the two queues under comparison and their known stores.
type deltaFIFOPair struct {
	ref, ours           cache.Queue
	refKnown, oursKnown *cacheKnownStore
}

func newDeltaFIFOPair(t *testing.T, seed uint64, withKnown, emitReplaced bool) *deltaFIFOPair {
	p := &deltaFIFOPair{}
	refOpts := cache.DeltaFIFOOptions{EmitDeltaTypeReplaced: emitReplaced}
	oursOpts := refOpts
	if withKnown {
		p.refKnown, p.oursKnown = newCacheKnown(), newCacheKnown()
		refOpts.KnownObjects, oursOpts.KnownObjects = p.refKnown, p.oursKnown
	}
	if seed%2 == 1 {
		refOpts.Transformer, oursOpts.Transformer = cacheTransform, cacheTransform
	}
	p.ref = cache.NewDeltaFIFOWithOptions(refOpts)
	p.ours = newDeltaFIFOWithOptions(oursOpts)
	t.Cleanup(p.ref.Close)
	t.Cleanup(p.ours.Close)
	return p
}

func runDeltaFIFODiff(t *testing.T, seed uint64, withKnown, emitReplaced bool) {
	rng := rand.New(rand.NewPCG(seed, 7))
	g := &objGen{rng: rng}
	p := newDeltaFIFOPair(t, seed, withKnown, emitReplaced)
	ours := p.ours.(*DropIn)
	if withKnown && seed%3 == 0 {
		p.refKnown.prefill(g, p.oursKnown)
	}
	for step := range 150 {
		label := fmt.Sprintf("step %d", step)
		r := rng.IntN(100)
		if step == 0 && seed%4 < 2 {
			r = 55 // start with a relist, as informers do
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
		case r < 53:
			o := g.next()
			key, _ := cache.MetaNamespaceKeyFunc(o)
			sameErr(t, label+" Delete(tombstone)",
				p.ref.Delete(cache.DeletedFinalStateUnknown{Key: key, Obj: o}),
				p.ours.Delete(cache.DeletedFinalStateUnknown{Key: key, Obj: o.DeepCopy()}))
		case r < 60:
			list := g.list()
			sameErr(t, label+" Replace", p.ref.Replace(anyList(list), "rv"), p.ours.Replace(anyList(list), "rv"))
		case r < 65:
			sameErr(t, label+" Resync", p.ref.Resync(), p.ours.Resync())
		default:
			p.popBoth(t, label, ours.c.len() > 0)
		}
		if a, b := p.ref.HasSynced(), p.ours.HasSynced(); a != b {
			t.Fatalf("%s: HasSynced client-go=%v ours=%v", label, a, b)
		}
	}
	for ours.c.len() > 0 {
		p.popBoth(t, "drain", true)
	}
	if _, ok := refPop(t, p.refPopper()); ok {
		t.Fatal("client-go still had items after ours was drained")
	}
}

func (p *deltaFIFOPair) refPopper() func(func([]cache.Delta, bool)) error {
	return func(record func([]cache.Delta, bool)) error {
		_, err := p.ref.Pop(func(item any, initial bool) error {
			ds := item.(cache.Deltas)
			record(ds, initial)
			if p.refKnown != nil {
				p.refKnown.apply(ds)
			}
			return nil
		})
		return err
	}
}

// popBoth pops from both queues when ours has something and compares.
func (p *deltaFIFOPair) popBoth(t *testing.T, label string, oursHasItems bool) {
	t.Helper()
	if !oursHasItems {
		return
	}
	want, ok := refPop(t, p.refPopper())
	if !ok {
		t.Fatalf("%s: client-go queue empty, ours not", label)
	}
	var got popped
	_, got.Err = p.ours.Pop(func(item any, initial bool) error {
		ds := item.(cache.Deltas)
		got.Deltas, got.Initial = ds, initial
		if p.oursKnown != nil {
			p.oursKnown.apply(ds)
		}
		return nil
	})
	comparePops(t, label, got, want)
}

func sameErr(t *testing.T, step string, ref, ours error) {
	t.Helper()
	if (ref == nil) != (ours == nil) {
		t.Fatalf("%s: client-go error %v, ours %v", step, ref, ours)
	}
}
