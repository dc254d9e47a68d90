package deltafifo

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"k8s.io/klog/v2/ktesting"
)

// TestScenarios runs the scripts in testdata/. Each starts with "new" and
// then drives one FIFO; see scenarioEnv.handle for the commands. Run with
// -rewrite to regenerate the expected output.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		env := &scenarioEnv{}
		datadriven.RunTest(t, path, env.handle)
	})
}

// scenarioEnv is the state of one script: the FIFO and the known store that
// pops update, as an informer's indexer would be.
type scenarioEnv struct {
	f *FIFO[obj]
	k *known
}

// parseObj turns "ns/name@rv" (or "name@rv") into an object.
func parseObj(t *testing.T, s string) obj {
	ref, rv, ok := strings.Cut(s, "@")
	if !ok {
		t.Fatalf("object %q: want ns/name@rv", s)
	}
	n, err := strconv.Atoi(rv)
	if err != nil {
		t.Fatalf("object %q: %v", s, err)
	}
	ns, name, found := strings.Cut(ref, "/")
	if !found {
		ns, name = "", ref
	}
	return mk(ns, name, n)
}

func (e *scenarioEnv) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "new":
		return e.newFIFO(t, d)
	case "add", "update", "delete":
		return e.write(t, d)
	case "replace":
		var list []obj
		for _, a := range d.CmdArgs {
			list = append(list, parseObj(t, a.Key))
		}
		return errOK(e.f.Replace(list, ""))
	case "resync":
		return errOK(e.f.Resync())
	case "pop":
		return e.pop(t)
	case "popbatch":
		return e.popBatch(t)
	case "state":
		return fmt.Sprintf("len=%d synced=%v known=%v", e.f.Len(), e.f.HasSynced(), e.k.ListKeys())
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

// newFIFO handles "new [inorder] [batch=N] [known=(ns/a@1,...)]".
func (e *scenarioEnv) newFIFO(t *testing.T, d *datadriven.TestData) string {
	opts := Options[obj]{}
	e.k = newKnown()
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "inorder":
			opts.InOrder = true
		case "batch":
			n, err := strconv.Atoi(a.Vals[0])
			if err != nil {
				t.Fatal(err)
			}
			opts.MaxBatch = n
		case "known":
			for _, v := range a.Vals {
				e.k.set(parseObj(t, v))
			}
		default:
			t.Fatalf("new: unknown argument %q", a.Key)
		}
	}
	opts.KnownObjects = e.k
	_, ctx := ktesting.NewTestContext(t)
	e.f = New(ctx, opts)
	t.Cleanup(e.f.Close)
	return "ok"
}

// write handles "add|update|delete obj...", one call per object.
func (e *scenarioEnv) write(t *testing.T, d *datadriven.TestData) string {
	call := map[string]func(obj) error{"add": e.f.Add, "update": e.f.Update, "delete": e.f.Delete}[d.Cmd]
	var out []string
	for _, a := range d.CmdArgs {
		if err := call(parseObj(t, a.Key)); err != nil {
			out = append(out, a.Key+": "+err.Error())
		}
	}
	if len(out) == 0 {
		return "ok"
	}
	return strings.Join(out, "\n")
}

func errOK(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

// pop handles "pop": it pops everything, one line per Pop.
func (e *scenarioEnv) pop(t *testing.T) string {
	var out []string
	for e.f.Len() > 0 {
		mustOK(t, e.f.Pop(t.Context(), func(key string, ds []Delta[obj], initial bool) error {
			out = append(out, fmt.Sprintf("%s: %s%s", key, fmtDeltas(ds), initialMark(initial)))
			e.k.apply(key, ds)
			return nil
		}))
	}
	return strings.Join(out, "\n")
}

// popBatch handles "popbatch": it pops everything in batches, one line per
// item and a separator between batches.
func (e *scenarioEnv) popBatch(t *testing.T) string {
	var out []string
	for e.f.Len() > 0 {
		mustOK(t, e.f.PopBatch(t.Context(), func(items []Item[obj], initial bool) error {
			out = append(out, "batch"+initialMark(initial))
			for _, it := range items {
				out = append(out, fmt.Sprintf("  %s: %s", it.Key, fmtDeltas(it.Deltas)))
				e.k.apply(it.Key, it.Deltas)
			}
			return nil
		}))
	}
	return strings.Join(out, "\n")
}

func initialMark(initial bool) string {
	if initial {
		return " (initial)"
	}
	return ""
}
