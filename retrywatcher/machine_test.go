package retrywatcher

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// TestMachine runs the scenarios in testdata/: each command is an input to
// the machine, and the expected output is the effects it returns followed
// by the phase and last resource version. Run with -rewrite to regenerate.
func TestMachine(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var m *Machine
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd == "new" {
				var err error
				m, err = NewMachine(scenarioConfig(t, td))
				if err != nil {
					m = nil
					return "error: " + err.Error() + "\n"
				}
				return state(m)
			}
			if m == nil {
				t.Fatalf("%s: %q before new", td.Pos, td.Cmd)
			}
			return render(scenarioInput(t, td, m)) + state(m)
		})
	})
}

func scenarioConfig(t *testing.T, td *datadriven.TestData) Config {
	var cfg Config
	td.MaybeScanArgs(t, "rv", &cfg.ResourceVersion)
	cfg.Relist = td.HasArg("relist")
	if arg, ok := td.Arg("known"); ok {
		for _, v := range arg.Vals {
			cfg.Known = append(cfg.Known, objAt(v))
		}
	}
	return cfg
}

func scenarioInput(t *testing.T, td *datadriven.TestData, m *Machine) []Effect {
	switch td.Cmd {
	case "start":
		return m.Start()
	case "opened":
		return m.WatchOpened()
	case "closed":
		var lasted time.Duration
		if arg, ok := td.Arg("lasted"); ok {
			var err error
			if lasted, err = time.ParseDuration(arg.SingleVal(t)); err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
		}
		return m.StreamClosed(lasted)
	case "waited":
		return m.Waited()
	case "stop":
		return m.Stop()
	case "watch-failed":
		return m.WatchFailed(scenarioError(t, td))
	case "list-failed":
		return m.ListFailed(scenarioError(t, td))
	case "event":
		return m.Event(scenarioEvent(t, td))
	case "listed":
		var rv string
		td.ScanArgs(t, "rv", &rv)
		var items []runtime.Object
		if arg, ok := td.Arg("items"); ok {
			for _, v := range arg.Vals {
				items = append(items, objAt(v))
			}
		}
		if td.HasArg("bad-item") {
			items = append(items, &metav1.Status{})
		}
		return m.Listed(items, rv)
	}
	t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	return nil
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

// scenarioError parses err=CODE[:RETRY-AFTER] or a network error name.
func scenarioError(t *testing.T, td *datadriven.TestData) error {
	var spec string
	td.ScanArgs(t, "err", &spec)
	codeStr, after, _ := strings.Cut(spec, ":")
	secs, _ := strconv.Atoi(after)
	switch codeStr {
	case "refused":
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case "eof":
		return io.EOF
	case "bogus":
		return errors.New("something odd")
	case "410":
		return apierrors.NewResourceExpired("too old resource version: 5 (10)")
	case "403":
		return apierrors.NewForbidden(gr, "", errors.New("no RBAC"))
	case "401":
		return apierrors.NewUnauthorized("bad token")
	case "404":
		return apierrors.NewNotFound(gr, "")
	case "429":
		return apierrors.NewTooManyRequests("slow down", secs)
	case "500":
		return apierrors.NewInternalError(errors.New("boom"))
	case "504":
		return apierrors.NewTimeoutError("timeout", secs)
	}
	t.Fatalf("%s: unknown error %q", td.Pos, spec)
	return nil
}

func render(effects []Effect) string {
	var b strings.Builder
	for _, e := range effects {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func state(m *Machine) string {
	return fmt.Sprintf("phase=%s rv=%s\n", m.Phase(), m.ResourceVersion())
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
		m.Start()
		m.WatchOpened()
		ev := watch.Event{Type: typ, Object: (*corev1.ConfigMap)(nil)}
		effects := m.Event(ev)
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
