package reflector

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// TestScenarios runs every testdata/*.txt scenario against the pure machine.
// Regenerate expectations with: go test ./reflector -run TestScenarios -rewrite
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		env := &scenario{}
		datadriven.RunTest(t, path, env.handle)
	})
}

// scenario drives one machine through a script; time starts at t0 and only
// moves with "tick".
type scenario struct {
	m       *Machine[*corev1.Pod]
	metrics *recorder
	t0, now time.Time
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (s *scenario) handle(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd == "new" {
		return s.create(t, td)
	}
	if s.m == nil {
		t.Fatalf("%s: run \"new\" first", td.Pos)
	}
	switch td.Cmd {
	case "metrics":
		return s.metrics.String()
	case "status":
		return s.state()
	}
	in := s.input(t, td)
	return s.render(s.m.Step(s.now, in))
}

func (s *scenario) create(t *testing.T, td *datadriven.TestData) string {
	var seed uint64 = 1
	td.MaybeScanArgs(t, "seed", &seed)
	s.metrics = newRecorder()
	cfg := Config[*corev1.Pod]{Rand: rand.New(rand.NewPCG(seed, seed)), Metrics: s.metrics}
	td.MaybeScanArgs(t, "page-size", &cfg.PageSize)
	cfg.IdleTimeout = durationArg(t, td, "idle")
	cfg.MinWatchTimeout = durationArg(t, td, "min-timeout")
	cfg.MaxWatchTimeout = durationArg(t, td, "max-timeout")
	var mode string
	td.MaybeScanArgs(t, "watch-list", &mode)
	cfg.WatchList = map[string]WatchListMode{"": WatchListOff, "auto": WatchListAuto, "off": WatchListOff, "force": WatchListForce}[mode]
	cfg.PagedReplace = td.HasArg("paged-replace")
	td.MaybeScanArgs(t, "resume-rv", &cfg.ResumeResourceVersion)
	cfg.ResumeUnavailable = td.HasArg("resume-unavailable")
	m, err := NewMachine(cfg)
	if err != nil {
		return "error: " + err.Error()
	}
	s.m, s.t0, s.now = m, t0, t0
	return s.render(m.Start(s.now))
}

func durationArg(t *testing.T, td *datadriven.TestData, key string) time.Duration {
	var v string
	if !td.MaybeScanArgs(t, key, &v) {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %s: %v", td.Pos, key, err)
	}
	return d
}

// input turns a command into a machine input.
func (s *scenario) input(t *testing.T, td *datadriven.TestData) Input {
	switch td.Cmd {
	case "list-page":
		return s.listPage(t, td)
	case "list-error":
		return ListFailed{Err: s.errArg(t, td)}
	case "watch-opened":
		return WatchOpened{}
	case "watch-open-error":
		return WatchFailed{Err: s.errArg(t, td)}
	case "watch-event":
		return WatchEvent{Event: s.event(t, td)}
	case "watch-error":
		if td.CmdArgs[0].Key == "garbage" {
			return WatchEvent{Event: watch.Event{Type: watch.Error, Object: objects.ConfigMap("ns", "x", objects.RV("1"))}}
		}
		return WatchEvent{Event: watch.Event{Type: watch.Error, Object: errorObject(s.errArg(t, td))}}
	case "watch-closed":
		return WatchClosed{}
	case "replace-failed":
		return ReplaceFailed{Err: fmt.Errorf("store is full")}
	case "stop":
		return Stop{}
	case "relist":
		return Relist{}
	case "tick":
		s.advance(t, td)
		return Tick{}
	}
	t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	return nil
}

// advance moves the clock: "tick 5s" by a duration, "tick deadline" to the
// machine's deadline.
func (s *scenario) advance(t *testing.T, td *datadriven.TestData) {
	if len(td.CmdArgs) == 0 {
		return
	}
	if td.CmdArgs[0].Key == "deadline" {
		if at, ok := s.m.Deadline(); ok {
			s.now = at
		}
		return
	}
	d, err := time.ParseDuration(td.CmdArgs[0].Key)
	if err != nil {
		t.Fatalf("%s: tick: %v", td.Pos, err)
	}
	s.now = s.now.Add(d)
}

func (s *scenario) errArg(t *testing.T, td *datadriven.TestData) error {
	if len(td.CmdArgs) == 0 {
		t.Fatalf("%s: %s needs an error name", td.Pos, td.Cmd)
	}
	retryAfter := 0
	td.MaybeScanArgs(t, "retry-after", &retryAfter)
	return errorFor(td.CmdArgs[0].Key, retryAfter)
}

// listPage: list-page rv=10 items=(a,b) [configmaps=(c)] [continue=x]
// The item "nameless" stands for an object without a name.
func (s *scenario) listPage(t *testing.T, td *datadriven.TestData) Input {
	var p ListPage
	td.MaybeScanArgs(t, "rv", &p.ResourceVersion)
	td.MaybeScanArgs(t, "continue", &p.Continue)
	p.Shared = td.HasArg("shared")
	if arg, ok := td.Arg("items"); ok {
		for _, n := range arg.Vals {
			if n == "nameless" {
				n = ""
			}
			p.Items = append(p.Items, objects.Pod("ns", n, objects.RV(p.ResourceVersion)))
		}
	}
	if arg, ok := td.Arg("configmaps"); ok {
		for _, n := range arg.Vals {
			p.Items = append(p.Items, objects.ConfigMap("ns", n, objects.RV(p.ResourceVersion)))
		}
	}
	return p
}

// event: watch-event ADDED a rv=12 [configmap] | watch-event BOOKMARK rv=15 [end]
// The name "nameless" stands for an object without a name.
func (s *scenario) event(t *testing.T, td *datadriven.TestData) watch.Event {
	typ := watch.EventType(td.CmdArgs[0].Key)
	var rv string
	td.MaybeScanArgs(t, "rv", &rv)
	if typ == watch.Bookmark {
		return watch.Event{Type: typ, Object: bookmark(rv, td.HasArg("end"))}
	}
	if len(td.CmdArgs) < 2 {
		return watch.Event{Type: typ}
	}
	name := td.CmdArgs[1].Key
	if name == "nameless" {
		name = ""
	}
	var obj runtime.Object = objects.Pod("ns", name, objects.RV(rv))
	if td.HasArg("configmap") {
		obj = objects.ConfigMap("ns", name, objects.RV(rv))
	}
	return watch.Event{Type: typ, Object: obj}
}

func (s *scenario) render(effects []Effect) string {
	var b strings.Builder
	for _, e := range effects {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	b.WriteString(s.state())
	return b.String()
}

func (s *scenario) state() string {
	st := s.m.Status()
	var b strings.Builder
	fmt.Fprintf(&b, "state: t=%s phase=%s synced=%t rv=%s", s.now.Sub(s.t0).Round(time.Millisecond), st.Phase, st.Synced,
		strconv.Quote(st.LastSyncResourceVersion))
	if st.Reason != ReasonNone {
		fmt.Fprintf(&b, " reason=%s failures=%d", st.Reason, st.Failures)
	}
	if at, ok := s.m.Deadline(); ok {
		fmt.Fprintf(&b, " deadline=%s", at.Sub(s.t0).Round(time.Millisecond))
	}
	if st.StreamFallback != ReasonNone {
		fmt.Fprintf(&b, " stream-fallback=%s", st.StreamFallback)
	}
	b.WriteByte('\n')
	return b.String()
}
