package informer

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/deltafifo"
)

// The resource version WaitForResourceVersion waits for is the one of the
// last list, event or bookmark applied to the store, in order: an event
// from the far future moves it only until the next one (it was the highest
// ever seen, for good, so every later barrier returned at once), and an
// empty or non-numeric resource version never moves it. A bookmark reaches
// it through the queue, as an event does: the apply stage is the store's
// one writer.
func TestWatermarkIsLastAppliedResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{})
		inf, s := e.inf, e.inf.sink
		done, cancel := context.WithCancel(t.Context())
		cancel()
		// apply pops everything queued, progress included, as Run's loop
		// does (a pop with the done context returns once nothing is left).
		apply := func() {
			t.Helper()
			for {
				err := inf.fifo.PopBatch(done, inf.processBatch)
				if errors.Is(err, context.Canceled) {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		// reached reports whether a barrier at rv would return now.
		reached := func(rv string) bool { return inf.WaitForResourceVersion(done, rv) == nil }
		check := func(step string, yes, no string) {
			t.Helper()
			// One watermark: every accessor reports the store's RV, and
			// it is the one barriers wait for.
			got := inf.Reader().LastSyncResourceVersion()
			if inf.LastSyncResourceVersion() != got {
				t.Errorf("%s: Informer.LastSyncResourceVersion %q, Reader's %q", step, inf.LastSyncResourceVersion(), got)
			}
			if applied, _ := inf.rv.get(); (applied != 0 || got != "") && strconv.FormatUint(applied, 10) != got {
				t.Errorf("%s: barriers wait on %d, the store reports %q", step, applied, got)
			}
			if yes != "" && !reached(yes) {
				t.Errorf("%s: a barrier at %s waits; the store reflects it", step, yes)
			}
			if no != "" && reached(no) {
				t.Errorf("%s: a barrier at %s returns; the store does not reflect it", step, no)
			}
		}

		if err := s.Replace([]*corev1.ConfigMap{cmAt("a", "5", "")}, "5"); err != nil {
			t.Fatal(err)
		}
		check("list queued", "", "5")
		apply()
		check("list applied", "5", "6")

		if err := s.Add(cmAt("far", "999999999", "")); err != nil {
			t.Fatal(err)
		}
		check("far-future event queued", "5", "6")
		apply()
		check("far-future event applied", "999999999", "")
		if err := s.Update(cmAt("a", "7", "")); err != nil {
			t.Fatal(err)
		}
		apply()
		check("next event applied", "7", "8")

		if err := s.Add(cmAt("junk", "abc", "")); err != nil {
			t.Fatal(err)
		}
		apply()
		if _, ok := inf.Reader().Namespace("ns").Get("junk"); !ok {
			t.Fatal("the event without a numeric resource version was not applied")
		}
		check("non-numeric event applied", "7", "8")
		s.UpdateResourceVersion("")
		s.UpdateResourceVersion("x1")
		check("bookmarks without a numeric resource version", "7", "8")
		if err := s.Replace([]*corev1.ConfigMap{cmAt("a", "7", "")}, ""); err != nil {
			t.Fatal(err)
		}
		apply()
		check("list without a resource version", "7", "8")
		s.UpdateResourceVersion("9")
		check("bookmark queued", "7", "8")
		apply()
		check("bookmark applied", "9", "10")
	})
}

// With OrderedQueue the store's resource version moves with every watch
// event applied, queue empty or not, as client-go's store's does; a list
// leaves no replace session open behind it, or no event would move it.
func TestWatermarkPerEventInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{OrderedQueue: true})
		inf, s := e.inf, e.inf.sink
		done, cancel := context.WithCancel(t.Context())
		cancel()
		if err := s.Replace([]*corev1.ConfigMap{cmAt("a", "5", ""), cmAt("b", "3", "")}, "5"); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, c := range []*corev1.ConfigMap{cmAt("a", "6", ""), cmAt("c", "7", "")} {
			if err := s.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		// One item per batch, as a busy queue hands them over: the
		// store's version after each.
		for {
			err := inf.fifo.PopBatch(done, func(items []deltafifo.Item[*corev1.ConfigMap], initial bool) error {
				for i := range items {
					if err := inf.processBatch(items[i:i+1], initial); err != nil {
						return err
					}
					if items[i].List == deltafifo.NoMark {
						seen = append(seen, items[i].Key+"@"+inf.LastSyncResourceVersion())
					}
				}
				return nil
			})
			if errors.Is(err, context.Canceled) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		want := []string{"ns/a@", "ns/b@", "ns/a@6", "ns/c@7"}
		if !slices.Equal(seen, want) {
			t.Errorf("the store's resource version after each item: %q, want %q", seen, want)
		}
	})
}
