package restsource

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestInternerBounded: under a random workload from several goroutines
// (a few hot strings among many cold ones, lengths up to beyond the
// limit), an Interner returns equal strings, never holds more than its
// capacity, keeps its table's size, and the hot strings hit.
func TestInternerBounded(t *testing.T) {
	in := NewInterner(100)
	st := in.Stats()
	if st.Capacity != 128 || st.Len != 0 {
		t.Fatalf("new Interner: %+v, want capacity 128 (100 rounded up) and empty", st)
	}
	table := &in.slots[0]
	const workers, lookups = 4, 20000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			zipf := rand.NewZipf(r, 1.2, 1, 1_000_000)
			for range lookups {
				n := zipf.Uint64()
				s := fmt.Sprintf("string-%d", n)
				if n%97 == 0 {
					s += strings.Repeat("x", MaxInternedLen) // too long to intern
				}
				var got string
				if n%2 == 0 {
					got = in.Bytes([]byte(s))
				} else {
					got = in.String(s)
				}
				if got != s {
					t.Errorf("interned %q as %q", s, got)
					return
				}
			}
		})
	}
	wg.Wait()
	st = in.Stats()
	t.Logf("%+v, hit rate %.2f", st, st.HitRate())
	if st.Len > st.Capacity || st.Capacity != 128 || &in.slots[0] != table {
		t.Fatalf("the table grew: %+v", st)
	}
	for i := range in.slots {
		if p := in.slots[i].Load(); p != nil && len(*p) > MaxInternedLen {
			t.Fatalf("interned a string of %d bytes", len(*p))
		}
	}
	if st.Hits+st.Misses == 0 || st.Evictions == 0 || st.Evictions > st.Misses {
		t.Fatalf("implausible counts: %+v", st)
	}
	if st.HitRate() < 0.3 {
		t.Fatalf("hit rate %.2f on a skewed workload, want at least 0.3", st.HitRate())
	}
	// A hit returns the interned copy, and allocates nothing.
	a := in.String(strings.Clone("hot"))
	b := in.Bytes([]byte("hot"))
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatal("a hit did not return the interned copy")
	}
	key := []byte("hot")
	if n := testing.AllocsPerRun(100, func() { _ = in.Bytes(key) }); n != 0 {
		t.Fatalf("a hit allocates %v times", n)
	}
}

// TestInternedDecodingEqual: on the corpus, decoding with an Interner
// (with and without StripManagedFields and ShareResourceLists) gives
// objects equal to decoding without one, in protobuf and JSON, through
// every path; the objects share their repeating strings (and resource
// lists), and the Interner stays within bounds.
func TestInternedDecodingEqual(t *testing.T) {
	in := NewInterner(0)
	pods := corpusPods(60, 4)
	// A string or list evicted from the table (two later ones landed in
	// its pair) is not shared with the objects decoded before: rare, and
	// counted rather than failed.
	compared, unshared := 0, 0
	for _, opts := range []Options{{Interner: in}, {Interner: in, StripManagedFields: true}, {Interner: in, StripManagedFields: true, ShareResourceLists: true}} {
		strip := opts.StripManagedFields
		ref, got := decoders(t, opts)
		first := map[string]*corev1.Pod{} // per encoding
		for i, p := range pods {
			for _, c := range []struct {
				name  string
				data  []byte
				paths []decodePath
			}{{"protobuf", podMessage(t, p), protoPaths}, {"json", podJSON(t, p), jsonPaths}} {
				for _, path := range c.paths {
					what := fmt.Sprintf("pod %d %s %s strip=%v share=%v", i, c.name, path.name, strip, opts.ShareResourceLists)
					want, err := path.decode(ref, c.data)
					if err != nil {
						t.Fatal(err)
					}
					if strip {
						want.(*corev1.Pod).ManagedFields = nil
					}
					obj, err := path.decode(got, c.data)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if !reflect.DeepEqual(obj, want) {
						t.Fatalf("%s: interning changed the object (-want +got):\n%s", what, cmp.Diff(want, obj))
					}
					pod, f := obj.(*corev1.Pod), first[c.name]
					if f == nil {
						first[c.name] = pod
						continue
					}
					compared++
					if pod.Namespace == f.Namespace && unsafe.StringData(pod.Namespace) != unsafe.StringData(f.Namespace) ||
						unsafe.StringData(pod.Spec.Containers[0].Name) != unsafe.StringData(f.Spec.Containers[0].Name) {
						unshared++
						t.Logf("%s: a string is not shared", what)
					}
					shared := reflect.ValueOf(pod.Spec.Containers[0].Resources.Requests).UnsafePointer() ==
						reflect.ValueOf(f.Spec.Containers[0].Resources.Requests).UnsafePointer()
					if shared && !opts.ShareResourceLists {
						t.Fatalf("%s: resource lists shared without ShareResourceLists", what)
					}
					if !shared && opts.ShareResourceLists {
						unshared++
						t.Logf("%s: the resource list is not shared", what)
					}
				}
			}
		}
	}
	st := in.Stats()
	t.Logf("%+v, hit rate %.2f; %d of %d objects not sharing", st, st.HitRate(), unshared, compared)
	if unshared > 0 && st.Evictions+st.ListEvictions == 0 || unshared > compared/20 {
		t.Fatalf("%d of %d objects do not share their strings or lists, with %d evictions", unshared, compared, st.Evictions+st.ListEvictions)
	}
	if st.Len > st.Capacity || st.HitRate() < 0.5 || st.ListHits == 0 {
		t.Fatalf("stats %+v, hit rate %.2f: want within capacity and at least 0.5", st, st.HitRate())
	}
}

// TestShareResourceListsNeedsInterner: the option is refused without an
// Interner to keep the lists in.
func TestShareResourceListsNeedsInterner(t *testing.T) {
	_, err := newObjectDecoder[*corev1.Pod](Options{Scheme: scheme.Scheme, ShareResourceLists: true})
	if err == nil || !strings.Contains(err.Error(), "Interner") {
		t.Fatalf("err = %v, want a refusal naming the Interner", err)
	}
}
