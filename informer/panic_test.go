package informer

import (
	"slices"
	"testing"
	"testing/synctest"
)

// deletePanics panics in OnDelete and records everything else.
type deletePanics struct{ recorder }

func (d *deletePanics) OnDelete(*obj, bool) { panic("delete boom") }

// A panic costs only the call that made it: in Coalesce mode a deletion
// and a re-creation folded into one entry are two handler calls, and the
// add still arrives when the delete panics. In InOrder mode too.
func TestListenerPanicCostsOnlyThatCall(t *testing.T) {
	for _, mode := range []DeliveryMode{Coalesce, InOrder} {
		synctest.Test(t, func(t *testing.T) {
			d := &deletePanics{}
			l := startListener(t, d, mode)
			l.add(add(a1))
			synctest.Wait()
			// One batch, one lock: the delete and the re-create are both
			// pending before the listener takes either.
			st := stamp{clock: l.clock}
			l.addBatch([]notification[*obj]{*del(a1, false), *add(a2)}, true, &st)
			synctest.Wait()
			want := []string{"add a@1 initial=false", "add a@2 initial=false"}
			if got := d.take(); !slices.Equal(got, want) {
				t.Fatalf("mode %d: got %q, want %q", mode, got, want)
			}
			if st := l.stats(); st.Panics != 1 || st.Processed != 3 {
				t.Fatalf("mode %d: stats = %+v, want 1 panic, 3 processed", mode, st)
			}
		})
	}
}
