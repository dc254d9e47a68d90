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
// capacity nor grows past it, and the hot strings hit.
func TestInternerBounded(t *testing.T) {
	in := NewInterner(100)
	st := in.Stats()
	if st.Capacity != 128 || st.MaxCapacity != 128 || st.Len != 0 {
		t.Fatalf("new Interner: %+v, want capacity 128 (100 rounded up) and empty", st)
	}
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
	tab := in.tab.Load()
	if st.Len > st.Capacity || st.Capacity != 128 || len(tab.slots) != 128 {
		t.Fatalf("the table grew: %+v", st)
	}
	for i := range tab.slots {
		if p := tab.slots[i].Load(); p != nil && len(*p) > MaxInternedLen {
			t.Fatalf("interned a string of %d bytes", len(*p))
		}
	}
	if st.Hits+st.Misses == 0 || st.Admitted == 0 || st.Evictions > st.Admitted || st.Admitted > st.Misses {
		t.Fatalf("implausible counts: %+v", st)
	}
	if st.HitRate() < 0.3 {
		t.Fatalf("hit rate %.2f on a skewed workload, want at least 0.3", st.HitRate())
	}
	// A hit returns the interned copy, and allocates nothing.
	in.String(strings.Clone("hot"))
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

// TestInternerAdmitsRepeated: strings seen once are never kept (they
// cannot push out those that repeat); a string is kept from its second
// sighting on, and shared from its third.
func TestInternerAdmitsRepeated(t *testing.T) {
	in := NewInterner(1024)
	for i := range 10000 {
		in.String(fmt.Sprintf("unique-%d", i))
	}
	if st := in.Stats(); st.Admitted != 0 || st.Len != 0 || st.Hits != 0 {
		t.Fatalf("after unique strings only: %+v, want nothing kept", st)
	}
	first := in.String(strings.Clone("repeated"))
	second := in.String(strings.Clone("repeated"))
	third := in.String(strings.Clone("repeated"))
	if unsafe.StringData(first) == unsafe.StringData(second) || unsafe.StringData(third) != unsafe.StringData(second) {
		t.Fatal("want the second sighting kept and returned from the third on")
	}
	if st := in.Stats(); st.Admitted != 1 || st.Len != 1 || st.Hits != 1 {
		t.Fatalf("%+v: want one string admitted and one hit", st)
	}
}

// TestInternerGrows: when more strings repeat than the table holds, it
// doubles until they fit (and never past its capacity); with fewer it
// stays at its initial size.
func TestInternerGrows(t *testing.T) {
	in := NewInterner(8 * InitialInternerCapacity)
	working := 3 * InitialInternerCapacity
	pass := func() (hits uint64) {
		before := in.Stats().Hits
		for i := range working {
			in.String(fmt.Sprintf("label-value-%d", i))
		}
		return in.Stats().Hits - before
	}
	for range 12 {
		pass()
	}
	hits := pass()
	st := in.Stats()
	t.Logf("%+v, hit rate %.2f", st, st.HitRate())
	if st.Capacity < 4*InitialInternerCapacity || st.Capacity > st.MaxCapacity || st.MaxCapacity != 8*InitialInternerCapacity {
		t.Fatalf("%+v: want grown to hold the working set, within the capacity", st)
	}
	if hits < uint64(working)*95/100 {
		t.Fatalf("%+v: a pass over the working set hit %d of %d times", st, hits, working)
	}
	small := NewInterner(0)
	for range 3 {
		for i := range InitialInternerCapacity / 4 {
			small.String(fmt.Sprintf("label-value-%d", i))
		}
	}
	if st := small.Stats(); st.Grows != 0 || st.Capacity != InitialInternerCapacity || st.MaxCapacity != DefaultInternerCapacity {
		t.Fatalf("%+v: a small working set grew the table", st)
	}
}

// TestInternedDecodingEqual: on the corpus, decoding with an Interner
// (with and without StripManagedFields, ShareResourceLists and
// ShareRepeated) gives objects equal to decoding without one, in protobuf
// and JSON, through every path; the objects share their repeating strings
// (and resource lists, and with ShareRepeated their repeated parts), and
// the Interner stays within bounds.
func TestInternedDecodingEqual(t *testing.T) {
	pods := corpusPods(60, 4)
	for _, opts := range []Options{{}, {StripManagedFields: true}, {StripManagedFields: true, ShareResourceLists: true},
		{ShareRepeated: true}, {StripManagedFields: true, ShareRepeated: true}} {
		in := NewInterner(0)
		opts.Interner = in
		share := opts.ShareResourceLists || opts.ShareRepeated
		// A string or list evicted from the table is not shared with the
		// objects decoded before: rare, and counted rather than failed.
		compared, unshared := 0, 0
		strip := opts.StripManagedFields
		ref, got := decoders(t, opts)
		// Per encoding, the second pod decoded: the first sighting of a
		// string only introduces it, from the second on it is kept.
		second := map[string]*corev1.Pod{}
		seen := map[string]int{}
		for i, p := range pods {
			for _, c := range []struct {
				name  string
				data  []byte
				paths []decodePath
			}{{"protobuf", podMessage(t, p), protoPaths}, {"json", podJSON(t, p), jsonPaths}} {
				for _, path := range c.paths {
					what := fmt.Sprintf("pod %d %s %s %+v", i, c.name, path.name, opts)
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
					pod := obj.(*corev1.Pod)
					if seen[c.name]++; seen[c.name] == 2 {
						second[c.name] = pod
					}
					f := second[c.name]
					if f == nil || f == pod {
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
					if shared && !share {
						t.Fatalf("%s: resource lists shared without ShareResourceLists", what)
					}
					if !shared && share {
						unshared++
						t.Logf("%s: the resource list is not shared", what)
					}
					parts := unsafe.SliceData(pod.Spec.Containers[0].Args) == unsafe.SliceData(f.Spec.Containers[0].Args) &&
						unsafe.SliceData(pod.Spec.Tolerations) == unsafe.SliceData(f.Spec.Tolerations)
					if parts && !opts.ShareRepeated {
						t.Fatalf("%s: parts shared without ShareRepeated", what)
					}
					if !parts && opts.ShareRepeated {
						unshared++
						t.Logf("%s: the parts are not shared", what)
					}
				}
			}
		}
		st := in.Stats()
		t.Logf("%+v: %+v, hit rate %.2f; %d of %d objects not sharing", opts, st, st.HitRate(), unshared, compared)
		if unshared > 0 && st.Evictions+st.ListEvictions+st.Parts.Evictions == 0 || unshared > compared/20 {
			t.Fatalf("%d of %d objects do not share their strings or parts, with %d evictions", unshared, compared, st.Evictions+st.ListEvictions)
		}
		if st.Len > st.Capacity || st.HitRate() < 0.5 || share && st.ListHits+st.Parts.Hits == 0 {
			t.Fatalf("stats %+v, hit rate %.2f: want within capacity and at least 0.5", st, st.HitRate())
		}
	}
}

// TestShareResourceListsNeedsInterner: the option is refused without an
// Interner to keep the lists in.
func TestShareResourceListsNeedsInterner(t *testing.T) {
	_, err := newTypedDecoder[*corev1.Pod](Options{Scheme: scheme.Scheme, ShareResourceLists: true})
	if err == nil || !strings.Contains(err.Error(), "Interner") {
		t.Fatalf("err = %v, want a refusal naming the Interner", err)
	}
}
