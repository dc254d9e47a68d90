package reflector

import (
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// countingClock is the real clock (the bubble's, under synctest) counting
// its Now calls.
type countingClock struct {
	clock.RealClock
	nows atomic.Int64
}

func (c *countingClock) Now() time.Time {
	c.nows.Add(1)
	return c.RealClock.Now()
}

// The shell reads the clock once per burst of watch events, not once per
// event: a clock read was a twentieth of the reflector's CPU per event.
func TestRunReadsTheClockOncePerBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const events = 4 * burstMax
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		w := watch.NewFakeWithChanSize(events, false)
		for i := range events {
			w.Modify(objects.Pod("ns", "a", objects.RV(strconv.Itoa(11+i)))) // waiting before the watch is opened
		}
		lw.list(podList("10", "", "a"), nil)
		lw.watch(w, nil)
		clk := &countingClock{}
		r, err := New(Options[*corev1.Pod]{Config: Config[*corev1.Pod]{WatchList: WatchListOff}, Source: lw, Store: st, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		stop := runReflector(t, r)
		defer stop()
		checkStore(t, st, "ns/a@"+strconv.Itoa(10+events))
		// 4 bursts, plus the reads around the list and the watch; one read
		// per event would be over 256.
		if n := clk.nows.Load(); n >= burstMax {
			t.Errorf("%d clock reads for %d waiting events, want fewer than %d", n, events, burstMax)
		}
	})
}
