package deltafifo

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

type obj = *metav1.PartialObjectMetadata

// mk returns an object "ns/name" (or "name" for an empty ns) at version rv.
func mk(ns, name string, rv int) obj {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, ResourceVersion: strconv.Itoa(rv),
	}}
}

// known is a map-backed KnownObjects with sorted, deterministic ListKeys.
// It is updated the way an informer's indexer is: from popped deltas.
type known struct {
	mu   sync.Mutex
	objs map[string]obj
}

func newKnown(objs ...obj) *known {
	k := &known{objs: map[string]obj{}}
	for _, o := range objs {
		k.set(o)
	}
	return k
}

func keyOf(o obj) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

func (k *known) set(o obj) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.objs[keyOf(o)] = o
}

func (k *known) remove(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.objs, key)
}

func (k *known) ListKeys() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]string, 0, len(k.objs))
	for key := range k.objs {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

func (k *known) GetByKey(key string) (obj, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	o, ok := k.objs[key]
	return o, ok
}

// apply updates the store from one key's popped deltas.
func (k *known) apply(key string, ds []Delta[obj]) {
	for _, d := range ds {
		if d.Type == Deleted {
			k.remove(key)
		} else {
			k.set(d.Object)
		}
	}
}

// fmtDeltas renders deltas compactly: "Added:ns/a@1 Deleted?:ns/b@2".
func fmtDeltas(ds []Delta[obj]) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		mark := ""
		if d.FinalStateUnknown {
			mark = "?"
		}
		o := "<nil>"
		if d.Object != nil {
			o = keyOf(d.Object) + "@" + d.Object.ResourceVersion
		}
		parts[i] = d.Type.String() + mark + ":" + o
	}
	return strings.Join(parts, " ")
}

// popAll pops until the FIFO is empty and returns one line per pop:
// "key: deltas". It updates k (when not nil) like an informer would.
func popAll(t *testing.T, f *FIFO[obj], k *known) []string {
	t.Helper()
	var out []string
	for f.Len() > 0 {
		err := f.Pop(t.Context(), func(key string, ds []Delta[obj], _ bool) error {
			out = append(out, key+": "+fmtDeltas(ds))
			if k != nil {
				k.apply(key, ds)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Pop: %v", err)
		}
	}
	return out
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("popped:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// countingMetrics records Metrics calls.
type countingMetrics struct {
	depth, rejected int
}

func (m *countingMetrics) Depth(n int) { m.depth = n }
func (m *countingMetrics) Rejected()   { m.rejected++ }

var errBoom = errors.New("boom")

func newFIFO(t *testing.T, opts Options[obj]) *FIFO[obj] {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := New(ctx, opts)
	t.Cleanup(f.Close)
	return f
}

// newDeltaFIFOWithOptions is the drop-in's constructor, as
// clientgo/tools/cache's NewDeltaFIFOWithOptions builds it.
func newDeltaFIFOWithOptions(opts cache.DeltaFIFOOptions) cache.Queue { return NewDropIn(opts) }
