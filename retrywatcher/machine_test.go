package retrywatcher

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/apifailure"
)

// TestMachine runs the scenarios in testdata/: each command is an input to
// the machine, stepped at the scenario's clock, and the expected output is
// the effects it returns followed by the phase, last resource version and,
// while waiting, how far off the deadline is. Time starts at t0 and moves
// only with "tick" (by a duration, or to the deadline) and "closed
// lasted=D" (the stream closes D after it opened). Run with -rewrite to
// regenerate.
func TestMachine(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{}
		datadriven.RunTest(t, path, s.handle)
	})
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// scenario drives one machine through a script.
type scenario struct {
	m *Machine
	// now is the scenario's clock; openedAt is the time of the last
	// "opened".
	now, openedAt time.Time
}

func (s *scenario) handle(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd == "new" {
		var err error
		s.now = t0
		s.m, err = NewMachine(scenarioConfig(t, td))
		if err != nil {
			s.m = nil
			return "error: " + err.Error() + "\n"
		}
		return s.state()
	}
	if s.m == nil {
		t.Fatalf("%s: %q before new", td.Pos, td.Cmd)
	}
	if td.Cmd == "start" {
		return render(s.m.Start(s.now)) + s.state()
	}
	return render(s.m.Step(s.now, s.input(t, td))) + s.state()
}

func scenarioConfig(t *testing.T, td *datadriven.TestData) Config {
	var seed uint64 = 1
	td.MaybeScanArgs(t, "seed", &seed)
	cfg := Config{Rand: rand.New(rand.NewPCG(seed, seed))}
	td.MaybeScanArgs(t, "jitter", &cfg.Backoff.Jitter)
	td.MaybeScanArgs(t, "rv", &cfg.ResourceVersion)
	cfg.Relist = td.HasArg("relist")
	if arg, ok := td.Arg("known"); ok {
		for _, v := range arg.Vals {
			cfg.Known = append(cfg.Known, objAt(v))
		}
	}
	return cfg
}

// input turns a command into a machine input, moving the clock first for
// "tick" and "closed lasted=D".
func (s *scenario) input(t *testing.T, td *datadriven.TestData) Input {
	switch td.Cmd {
	case "opened":
		s.openedAt = s.now
		return WatchOpened{}
	case "closed":
		if arg, ok := td.Arg("lasted"); ok {
			s.now = s.openedAt.Add(parseDuration(t, td, arg.SingleVal(t)))
		}
		return WatchClosed{}
	case "tick":
		s.advance(t, td)
		return Tick{}
	case "stop":
		return Stop{}
	case "watch-failed":
		return WatchFailed{Err: scenarioError(t, td)}
	case "list-failed":
		return ListFailed{Err: scenarioError(t, td)}
	case "event":
		return WatchEvent{Event: scenarioEvent(t, td)}
	case "listed":
		var in Listed
		td.ScanArgs(t, "rv", &in.ResourceVersion)
		if arg, ok := td.Arg("items"); ok {
			for _, v := range arg.Vals {
				in.Items = append(in.Items, objAt(v))
			}
		}
		if td.HasArg("bad-item") {
			in.Items = append(in.Items, &metav1.Status{})
		}
		return in
	}
	t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	return nil
}

// advance moves the clock: "tick 5s" by a duration, "tick deadline" (or a
// bare "tick") to the machine's deadline, if it has one.
func (s *scenario) advance(t *testing.T, td *datadriven.TestData) {
	if len(td.CmdArgs) == 0 || td.CmdArgs[0].Key == "deadline" {
		if at, ok := s.m.Deadline(); ok {
			s.now = at
		}
		return
	}
	s.now = s.now.Add(parseDuration(t, td, td.CmdArgs[0].Key))
}

func parseDuration(t *testing.T, td *datadriven.TestData, v string) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", td.Pos, err)
	}
	return d
}

func scenarioEvent(t *testing.T, td *datadriven.TestData) watch.Event {
	var typ string
	td.ScanArgs(t, "type", &typ)
	ev := watch.Event{Type: watch.EventType(typ)}
	switch {
	case td.HasArg("obj"):
		var spec string
		td.ScanArgs(t, "obj", &spec)
		ev.Object = objAt(spec)
	case td.HasArg("rv"):
		var rv string
		td.ScanArgs(t, "rv", &rv)
		ev.Object = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	case td.HasArg("err"):
		var se *apierrors.StatusError
		if !errors.As(scenarioError(t, td), &se) {
			t.Fatalf("%s: err of an ERROR event must be an HTTP status", td.Pos)
		}
		ev.Object = &se.ErrStatus
	case td.HasArg("nometa"):
		ev.Object = &runtime.Unknown{}
	}
	return ev
}

// objAt parses "name@rv" into a ConfigMap in namespace ns.
func objAt(spec string) *corev1.ConfigMap {
	name, rv, _ := strings.Cut(spec, "@")
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// scenarioError parses err=NAME[:RETRY-AFTER], NAME a failure of the
// decision table the reflector's tests share (internal/apifailure): an
// HTTP code, "refused", "eof", "bogus", ...
func scenarioError(t *testing.T, td *datadriven.TestData) error {
	var spec string
	td.ScanArgs(t, "err", &spec)
	name, after, _ := strings.Cut(spec, ":")
	secs, _ := strconv.Atoi(after)
	f, ok := apifailure.Lookup(name)
	if !ok {
		t.Fatalf("%s: unknown error %q", td.Pos, spec)
	}
	return f.Err(secs)
}

func render(effects []Effect) string {
	var b strings.Builder
	for _, e := range effects {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *scenario) state() string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s rv=%s", s.m.Phase(), s.m.ResourceVersion())
	if at, ok := s.m.Deadline(); ok {
		fmt.Fprintf(&b, " deadline=+%s", at.Sub(s.now))
	}
	b.WriteByte('\n')
	return b.String()
}

// TestTypedNilObjectsDoNotPanic: an event whose object is a typed nil
// pointer (a broken decoder or fake) ends the watcher with an error instead
// of panicking in GetResourceVersion, and renders in logs.
func TestTypedNilObjectsDoNotPanic(t *testing.T) {
	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark} {
		m, err := NewMachine(Config{ResourceVersion: "5"})
		if err != nil {
			t.Fatal(err)
		}
		m.Start(t0)
		m.Step(t0, WatchOpened{})
		ev := watch.Event{Type: typ, Object: (*corev1.ConfigMap)(nil)}
		effects := m.Step(t0, WatchEvent{Event: ev})
		want := PhaseStopped // a data event without an RV would leave a gap
		if typ == watch.Bookmark {
			want = PhaseWatching // a bookmark is dropped: it only moves the resume point
		}
		if m.Phase() != want {
			t.Errorf("%s of a typed nil: phase %v, effects %v; want %v", typ, m.Phase(), effects, want)
		}
		if got := describeEvent(ev); got != string(typ)+" object=*v1.ConfigMap(nil)" {
			t.Errorf("describeEvent = %q", got)
		}
	}
}
