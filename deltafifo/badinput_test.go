package deltafifo

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/store"
)

// TestBadInputQueuesNothingAndLosesNothing feeds every write method a nil
// object, a nameless one, one the key function rejects and one the transform
// rejects, in both modes, and checks each call fails, counts a rejection,
// queues nothing and keeps what was queued before.
func TestBadInputQueuesNothingAndLosesNothing(t *testing.T) {
	errKey := errors.New("no key for you")
	keyFunc := func(o obj) (string, error) {
		if o.Name == "unkeyable" {
			return "", errKey
		}
		return store.NamespacedKey(o)
	}
	transform := func(o obj) (obj, error) {
		if o.Name == "untransformable" {
			return nil, errBoom
		}
		return o, nil
	}
	bad := []struct {
		name string
		obj  obj
		want error
	}{
		{"nil", nil, ErrInvalidObject},
		{"nameless", &metav1.PartialObjectMetadata{}, ErrInvalidObject},
		{"unkeyable", mk("ns", "unkeyable", 9), errKey},
		{"untransformable", mk("ns", "untransformable", 9), ErrTransform},
	}
	for _, inOrder := range []bool{false, true} {
		for _, b := range bad {
			t.Run(fmt.Sprintf("inOrder=%v/%s", inOrder, b.name), func(t *testing.T) {
				m := &countingMetrics{}
				k := newKnown(mk("ns", "known", 1))
				f := newFIFO(t, Options[obj]{KeyFunc: keyFunc, Transform: transform, KnownObjects: k, InOrder: inOrder, Metrics: m})
				mustOK(t, f.Add(mk("ns", "a", 1)))
				mustOK(t, f.Update(mk("ns", "a", 2)))
				calls := map[string]func() error{
					"Add":    func() error { return f.Add(b.obj) },
					"Update": func() error { return f.Update(b.obj) },
					"Delete": func() error { return f.Delete(b.obj) },
					"Replace": func() error {
						return f.Replace([]obj{mk("ns", "x", 3), b.obj, mk("ns", "y", 3)}, "3")
					},
				}
				for name, call := range calls {
					if err := call(); !errors.Is(err, b.want) {
						t.Errorf("%s(%s) = %v, want %v", name, b.name, err, b.want)
					}
				}
				if m.rejected != len(calls) {
					t.Errorf("Rejected counted %d times, want %d", m.rejected, len(calls))
				}
				if f.HasSynced() != true {
					t.Error("failed calls changed HasSynced")
				}
				want := []string{"ns/a: Added:ns/a@1 Updated:ns/a@2"}
				if inOrder {
					want = []string{"ns/a: Added:ns/a@1", "ns/a: Updated:ns/a@2"}
				}
				wantLines(t, popAll(t, f, nil), want...)
			})
		}
	}
}

func TestBadInputBeforeFirstReplaceKeepsUnsynced(t *testing.T) {
	f := newFIFO(t, Options[obj]{})
	if err := f.Add(nil); !errors.Is(err, ErrNilObject) {
		t.Fatalf("Add(nil) = %v, want ErrNilObject", err)
	}
	if f.HasSynced() {
		t.Fatal("a refused Add marked the FIFO populated")
	}
}

func TestDropInBadInput(t *testing.T) {
	q := newDeltaFIFOWithOptions(cache.DeltaFIFOOptions{})
	defer q.Close()
	mustOK(t, q.Add(mk("ns", "a", 1)))
	// client-go's MetaNamespaceKeyFunc accepts a nameless object (key ""),
	// so the drop-in does too; these it rejects.
	for _, o := range []any{nil, obj(nil), 42} {
		var ke cache.KeyError
		if err := q.Add(o); !errors.As(err, &ke) {
			t.Errorf("Add(%#v) = %v, want a cache.KeyError", o, err)
		}
		if err := q.Replace([]any{mk("ns", "b", 2), o}, "2"); !errors.As(err, &ke) {
			t.Errorf("Replace with %#v = %v, want a cache.KeyError", o, err)
		}
	}
	item, err := q.Pop(func(any, bool) error { return nil })
	mustOK(t, err)
	ds := item.(cache.Deltas)
	if len(ds) != 1 || ds[0].Type != cache.Added {
		t.Fatalf("popped %v, want the one Added queued before the bad input", ds)
	}
	if q.(*DropIn).c.len() != 0 {
		t.Fatal("bad input left something queued")
	}
}

func TestEmptyKeyAndNilProcessAreRefused(t *testing.T) {
	f := newFIFO(t, Options[obj]{KeyFunc: func(obj) (string, error) { return "", nil }})
	if err := f.Add(mk("ns", "a", 1)); !errors.Is(err, ErrEmptyKey) || !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("Add with empty key = %v, want ErrInvalidObject wrapping ErrEmptyKey", err)
	}
	if err := f.Pop(t.Context(), nil); !errors.Is(err, ErrNilFunc) {
		t.Fatalf("Pop(nil) = %v, want ErrNilFunc", err)
	}
	if err := f.PopBatch(t.Context(), nil); !errors.Is(err, ErrNilFunc) {
		t.Fatalf("PopBatch(nil) = %v, want ErrNilFunc", err)
	}
}
