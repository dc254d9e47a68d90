package reflector

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/apifailure"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// The reflector's column of the shared decision table
// (internal/apifailure), which the RetryWatcher's tests read too: Classify
// gives each failure its Reason, and a watch that fails with it, opening
// or as an ERROR event, backs off (slowly where the table says so, at
// least as long as the server asked) and then re-watches or relists as the
// table says.
func TestDecisionTable(t *testing.T) {
	for _, f := range apifailure.All() {
		t.Run(f.Name, func(t *testing.T) {
			if got := Classify(f.Err(0)); got.String() != f.Reason {
				t.Errorf("Classify = %s, table says %s", got, f.Reason)
			}
			if got := watchFailureAction(t, WatchFailed{Err: f.Err(0)}); got != f.Reflector {
				t.Errorf("watch failed: the reflector does %q, table says %q", got, f.Reflector)
			}
			if f.Status {
				ev := watch.Event{Type: watch.Error, Object: errorObject(f.Err(0))}
				if got := watchFailureAction(t, WatchEvent{Event: ev}); got != f.Reflector {
					t.Errorf("ERROR event: the reflector does %q, table says %q", got, f.Reflector)
				}
				// The server's requested delay is a floor, whatever the failure.
				const asked = 45 * time.Second
				if d := backoffAfter(t, WatchFailed{Err: f.Err(int(asked / time.Second))}); RetryAfter(f.Err(45)) > 0 && d < asked {
					t.Errorf("the server asked for %v, the reflector waits %v", asked, d)
				}
			}
		})
	}
}

// watchingMachine returns a machine, at t0, whose watch is being opened
// (for WatchFailed) or is open (for a WatchEvent).
func watchingMachine(t *testing.T, in Input) *Machine[*corev1.Pod] {
	t.Helper()
	m, err := NewMachine(Config[*corev1.Pod]{Rand: rand.New(rand.NewPCG(1, 1)), WatchList: WatchListOff})
	if err != nil {
		t.Fatal(err)
	}
	m.Start(t0)
	m.Step(t0, ListPage{Items: []runtime.Object{objects.Pod("ns", "a", objects.RV("10"))}, ResourceVersion: "10"})
	if _, event := in.(WatchEvent); event {
		m.Step(t0, WatchOpened{})
	}
	if p := m.Status().Phase; p != PhaseWatching {
		t.Fatalf("phase %s, want watching", p)
	}
	return m
}

// backoffAfter returns the delay the machine sleeps after in.
func backoffAfter(t *testing.T, in Input) time.Duration {
	t.Helper()
	m := watchingMachine(t, in)
	for _, e := range m.Step(t0, in) {
		if s, ok := e.(Sleep); ok {
			return s.D
		}
	}
	t.Fatalf("%T: no Sleep (phase %s)", in, m.Status().Phase)
	return 0
}

// watchFailureAction feeds in to a watching machine and names what it does:
// a backoff (slow if at least Backoff.Slow), then a watch or a list.
func watchFailureAction(t *testing.T, in Input) string {
	t.Helper()
	m := watchingMachine(t, in)
	var slept time.Duration = -1
	for _, e := range m.Step(t0, in) {
		if s, ok := e.(Sleep); ok {
			slept = s.D
		}
	}
	if slept < 0 {
		t.Fatalf("%T: no backoff (phase %s)", in, m.Status().Phase)
	}
	at, ok := m.Deadline()
	if !ok {
		t.Fatal("no deadline while backing off")
	}
	action := ""
	for _, e := range m.Step(at, Tick{}) {
		switch e.(type) {
		case Watch:
			action = apifailure.Rewatch
		case List:
			action = apifailure.Relist
		}
	}
	if action == "" {
		return fmt.Sprintf("neither watch nor list after %v", slept)
	}
	if slept >= m.cfg.Backoff.withDefaults().Slow {
		action += " slowly"
	}
	return action
}
