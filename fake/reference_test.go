package fake

import (
	"maps"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// refState is the naive reference: key → "rv,churnLabel".
type refState map[string]string

func refOf(t *testing.T, objs []runtime.Object, onlyA bool) refState {
	t.Helper()
	st := refState{}
	for _, o := range objs {
		m, err := meta.Accessor(o)
		mustNoErr(t, err)
		if onlyA && m.GetLabels()["churn"] != "a" {
			continue
		}
		st[key(m.GetNamespace(), m.GetName())] = m.GetResourceVersion() + "," + m.GetLabels()["churn"]
	}
	return st
}

// pagedList lists every page of opts with the given limit.
func pagedList(t *testing.T, lw *ListerWatcher, opts metav1.ListOptions) ([]runtime.Object, string) {
	t.Helper()
	var all []runtime.Object
	rv := ""
	for {
		list, err := lw.ListWithContext(t.Context(), opts)
		mustNoErr(t, err)
		items, err := meta.ExtractList(list)
		mustNoErr(t, err)
		all = append(all, items...)
		lm, _ := meta.ListAccessor(list)
		if rv == "" {
			rv = lm.GetResourceVersion()
		} else if rv != lm.GetResourceVersion() {
			t.Fatalf("page RV moved from %s to %s", rv, lm.GetResourceVersion())
		}
		if lm.GetContinue() == "" {
			return all, rv
		}
		opts = metav1.ListOptions{Limit: opts.Limit, Continue: lm.GetContinue(), LabelSelector: opts.LabelSelector}
	}
}

// TestAgainstNaiveReference records the full state after every write, then
// checks exact lists, paged lists and watches from every retained RV against
// those recordings: applying a watch's events to the state at its RV must
// give the latest state, with and without a label selector.
func TestAgainstNaiveReference(t *testing.T) {
	srv := newTestServer(t, Options{HistorySize: 150})
	lw := srv.ListerWatcher(LWOptions{Resource: podsGVR})
	churn, err := NewChurn(srv, ChurnOptions{Resource: podsGVR, Namespaces: []string{"a", "b", "c"}, Seed: 7, MaxObjects: 20})
	mustNoErr(t, err)
	snaps := map[string][]runtime.Object{}
	for range 200 {
		mustNoErr(t, churn.Step(t.Context()))
		objs, rv := pagedList(t, lw, metav1.ListOptions{})
		snaps[rv] = objs
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	latest := snaps[srv.ResourceVersion()]
	compacted, _ := parseRV(srv.CompactedResourceVersion())
	for rv, objs := range snaps {
		n, _ := parseRV(rv)
		if n < compacted {
			continue
		}
		limit := int64(1 + rnd.IntN(7))
		got, _ := pagedList(t, lw, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		paged, pagedRV := pagedList(t, lw, metav1.ListOptions{ResourceVersion: rv, Limit: limit})
		for name, st := range map[string][]runtime.Object{"exact": got, "paged exact": paged} {
			if !maps.Equal(refOf(t, st, false), refOf(t, objs, false)) {
				t.Fatalf("%s list at %s differs from the recording", name, rv)
			}
		}
		if pagedRV != rv {
			t.Fatalf("paged exact list at %s reports RV %s", rv, pagedRV)
		}
		for _, onlyA := range []bool{false, true} {
			checkWatchReplay(t, lw, rv, refOf(t, objs, onlyA), refOf(t, latest, onlyA), onlyA)
		}
	}
}

// checkWatchReplay applies the events of a watch from rv to from and
// compares the result with want.
func checkWatchReplay(t *testing.T, lw *ListerWatcher, rv string, from, want refState, onlyA bool) {
	t.Helper()
	opts := metav1.ListOptions{ResourceVersion: rv}
	if onlyA {
		opts.LabelSelector = "churn=a"
	}
	synctest.Test(t, func(t *testing.T) {
		w := openWatch(t, lw, opts)
		st := maps.Clone(from)
		for {
			synctest.Wait()
			var ev watch.Event
			select {
			case ev = <-w.ResultChan():
			default:
				if !maps.Equal(st, want) {
					t.Fatalf("watch from %s (selector %v) replayed to\n%v\nwant\n%v", rv, onlyA, st, want)
				}
				return
			}
			m, _ := meta.Accessor(ev.Object)
			k := key(m.GetNamespace(), m.GetName())
			_, had := st[k]
			switch {
			case ev.Type == watch.Added && !had, ev.Type == watch.Modified && had:
				st[k] = m.GetResourceVersion() + "," + m.GetLabels()["churn"]
			case ev.Type == watch.Deleted && had:
				delete(st, k)
			default:
				t.Fatalf("watch from %s: %s for %s (present=%v)", rv, ev.Type, k, had)
			}
		}
	})
}
