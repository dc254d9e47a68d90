package informer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/store"
)

// TestApplyScenarios drives the apply stage (an item from the FIFO → store
// changes → notifications) through the scripts in testdata/apply.
//
//	cache                       the store's content, one "name@rv" per line
//	apply [initial] [in-order]  one item per line: a delta "<Type> name@rv
//	                            [unknown]", or "<Type> name" for a delta
//	                            without an object, or a list mark "begin" or
//	                            "end"; prints each line's notifications,
//	                            then the store. Every line of one command
//	                            is applied in one transaction; a list may
//	                            span commands, as it spans batches.
//	apply-batch [in-order]      the lines as one batch, as the informer
//	                            applies a popped batch: prints the
//	                            notifications in order, then the store
//
// The store prints "(at rv)" when it has a resource version.
//
// Every object is in namespace "ns"; keys are "ns/name".
func TestApplyScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/apply", func(t *testing.T, path string) {
		var st *store.Store[*corev1.ConfigMap]
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "cache":
				var err error
				if st, err = store.New(store.Options[*corev1.ConfigMap]{}); err != nil {
					t.Fatal(err)
				}
				for _, line := range lines(td.Input) {
					if err := st.Upsert(scriptCM(line)); err != nil {
						t.Fatal(err)
					}
				}
				// The scripts start from a store that has no resource
				// version yet, only objects.
				st.Write(func(tx *store.Tx[*corev1.ConfigMap]) { tx.SetResourceVersion("") })
				return dumpStore(st)
			case "apply":
				var out strings.Builder
				inOrder := td.HasArg("in-order")
				a := applier[*corev1.ConfigMap]{initial: td.HasArg("initial"), tellUnknownDeletes: inOrder, rvPerEvent: inOrder}
				st.Write(func(tx *store.Tx[*corev1.ConfigMap]) {
					for _, line := range lines(td.Input) {
						it := scriptItem(t, line)
						a.notes = a.notes[:0]
						err := a.item(tx, &it)
						switch {
						case err != nil:
							fmt.Fprintf(&out, "%s: error %v\n", line, err)
						case len(a.notes) == 0:
							fmt.Fprintf(&out, "%s: nothing to tell\n", line)
						default:
							for _, n := range a.notes {
								fmt.Fprintf(&out, "%s: %s\n", line, describeNote(n))
							}
						}
					}
				})
				return out.String() + dumpStore(st)
			case "apply-batch":
				var out strings.Builder
				inOrder := td.HasArg("in-order")
				a := applier[*corev1.ConfigMap]{tellUnknownDeletes: inOrder, deletionsFirst: inOrder, rvPerEvent: inOrder}
				var items []deltafifo.Item[*corev1.ConfigMap]
				for _, line := range lines(td.Input) {
					items = append(items, scriptItem(t, line))
				}
				st.Write(func(tx *store.Tx[*corev1.ConfigMap]) {
					a.batch(tx, items, func(err error, key string) { fmt.Fprintf(&out, "%s: error %v\n", key, err) })
				})
				for _, n := range a.notes {
					fmt.Fprintf(&out, "%s\n", describeNote(n))
				}
				return out.String() + dumpStore(st)
			}
			t.Fatalf("unknown command %q", td.Cmd)
			return ""
		})
	})
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// scriptCM parses "name@rv" into a ConfigMap.
func scriptCM(s string) *corev1.ConfigMap {
	name, rv, _ := strings.Cut(s, "@")
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// scriptItem parses a line of an apply command: a list mark or a delta.
func scriptItem(t *testing.T, line string) deltafifo.Item[*corev1.ConfigMap] {
	switch line {
	case "begin":
		return deltafifo.Item[*corev1.ConfigMap]{List: deltafifo.ListBegin}
	case "end":
		return deltafifo.Item[*corev1.ConfigMap]{List: deltafifo.ListEnd}
	}
	d := scriptDelta(t, line)
	key := "ns/" + strings.SplitN(strings.Fields(line)[1], "@", 2)[0]
	return deltafifo.Item[*corev1.ConfigMap]{Key: key, Deltas: []deltafifo.Delta[*corev1.ConfigMap]{d}}
}

// scriptDelta parses "<Type> name@rv [unknown]" or "<Type> name".
func scriptDelta(t *testing.T, line string) deltafifo.Delta[*corev1.ConfigMap] {
	f := strings.Fields(line)
	var d deltafifo.Delta[*corev1.ConfigMap]
	switch f[0] {
	case "Added":
		d.Type = deltafifo.Added
	case "Updated":
		d.Type = deltafifo.Updated
	case "Deleted":
		d.Type = deltafifo.Deleted
	case "Replaced":
		d.Type = deltafifo.Replaced
	case "Sync":
		d.Type = deltafifo.Sync
	default:
		t.Fatalf("unknown delta type in %q", line)
	}
	if strings.Contains(f[1], "@") {
		d.Object = scriptCM(f[1])
	}
	d.FinalStateUnknown = len(f) > 2 && f[2] == "unknown"
	return d
}

func describeNote(n notification[*corev1.ConfigMap]) string {
	at := func(c *corev1.ConfigMap) string {
		if c == nil {
			return "<nil>"
		}
		return c.Name + "@" + c.ResourceVersion
	}
	s := fmt.Sprintf("%s %s", n.kind, at(n.Object))
	if n.Old != nil {
		s += " old=" + at(n.Old)
	}
	if n.InInitialList {
		s += " initial"
	}
	if n.FinalStateUnknown {
		s += " final-state-unknown"
	}
	return s
}

func dumpStore(st *store.Store[*corev1.ConfigMap]) string {
	var objs []string
	for _, key := range sortedKeys(st) {
		o, _ := st.GetByKey(key)
		objs = append(objs, o.Name+"@"+o.ResourceVersion)
	}
	out := "store: " + strings.Join(objs, " ")
	if rv := st.Reader().LastSyncResourceVersion(); rv != "" {
		out += " (at " + rv + ")"
	}
	return out + "\n"
}

func sortedKeys(st *store.Store[*corev1.ConfigMap]) []string {
	keys := st.ListKeys()
	slices.Sort(keys)
	return keys
}
