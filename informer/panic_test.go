package informer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/go-logr/logr/funcr"
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

// A panic's log line names the entry's key in both modes, though the
// InOrder buffer keeps no keys: the listener works it out from the object.
func TestListenerPanicLogsKey(t *testing.T) {
	for _, mode := range []DeliveryMode{Coalesce, InOrder} {
		synctest.Test(t, func(t *testing.T) {
			var logged []string
			d := &deletePanics{}
			l := newListener[*obj](d, listenerOptions{Mode: mode, Logger: funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})})
			l.keyOf = func(o *obj) (string, error) { return "ns/" + o.key, nil }
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); l.run(ctx) }()
			defer func() { cancel(); <-done }()
			n := *del(a1, false)
			if mode == Coalesce {
				n.Key = "ns/a"
			}
			l.add(&n)
			synctest.Wait()
			if len(logged) != 1 || !strings.Contains(logged[0], `"key"="ns/a"`) {
				t.Fatalf("mode %d: logged %q, want one line with the key ns/a", mode, logged)
			}
		})
	}
}
