package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// poolIndexers are the indexers the random test adds, single- and
// multi-valued, including ones with duplicate values, values in map order,
// no values, and one value shared by every object (so postings lists grow
// past smallPostings and shrink back).
var poolIndexers = map[string]func(*corev1.Pod) []string{
	"node": func(p *corev1.Pod) []string { return []string{p.Spec.NodeName} },
	"images": func(p *corev1.Pod) []string {
		var out []string
		for _, c := range p.Spec.Containers {
			out = append(out, c.Image)
		}
		return out
	},
	"labels": func(p *corev1.Pod) []string {
		var out []string
		for k, v := range p.Labels {
			out = append(out, k+"="+v)
		}
		return out
	},
	"tier": func(p *corev1.Pod) []string {
		if v, ok := p.Labels["tier"]; ok {
			return []string{v}
		}
		return nil
	},
	"all": func(*corev1.Pod) []string { return []string{"x"} },
}

// poolValueIndexers are the single-valued pool indexers in their
// allocation-free form, which the typed store uses when no conflict is
// planned (a conflicting call must fail as a whole, so it uses one form).
var poolValueIndexers = map[string]ValueIndexFunc[*corev1.Pod]{
	"node": func(p *corev1.Pod) (string, bool) { return p.Spec.NodeName, true },
	"tier": func(p *corev1.Pod) (string, bool) { v, ok := p.Labels["tier"]; return v, ok },
	"all":  func(*corev1.Pod) (string, bool) { return "x", true },
}

var (
	randNamespaces = []string{"a", "b", ""}
	randNames      = []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}
)

// fixture holds the four implementations driven in lockstep.
type fixture struct {
	t      *testing.T
	rng    *rand.Rand
	rv     int
	ref    *refStore
	typed  *Store[*corev1.Pod]
	dropIn cache.Indexer
	cg     cache.Indexer
}

func newFixture(t *testing.T, seed uint64) *fixture {
	typed, err := New(Options[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	nsIndex := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	return &fixture{
		t:      t,
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		ref:    newRefStore(),
		typed:  typed,
		dropIn: NewDropInIndexer(cache.MetaNamespaceKeyFunc, nsIndex),
		cg:     cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndex),
	}
}

func (f *fixture) pick(list []string) string { return list[f.rng.IntN(len(list))] }

func (f *fixture) randPod() *corev1.Pod {
	f.rv++
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: f.pick(randNamespaces), Name: f.pick(randNames),
		ResourceVersion: strconv.Itoa(f.rv),
	}}
	p.Spec.NodeName = f.pick([]string{"", "x", "y"})
	if f.rng.IntN(2) == 0 {
		p.Labels = map[string]string{"app": f.pick([]string{"web", "db"})}
		if f.rng.IntN(2) == 0 {
			p.Labels["tier"] = f.pick([]string{"fe", "be"})
		}
	}
	for range f.rng.IntN(4) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Image: f.pick([]string{"i1", "i2", "i3"})})
	}
	return p
}

func (f *fixture) must(what string, errs ...error) {
	f.t.Helper()
	for _, err := range errs {
		if err != nil {
			f.t.Fatalf("%s: %v", what, err)
		}
	}
}

func (f *fixture) upsert() string {
	p := f.randPod()
	wantOld, wantExisted := f.ref.items[refKey(p)]
	f.ref.upsert(p)
	old, existed, err := f.typed.Swap(p)
	f.must("upsert", err, f.dropIn.Update(p), f.cg.Update(p))
	if existed != wantExisted || old != wantOld {
		f.t.Fatalf("Swap returned (%p, %t), want (%p, %t)", old, existed, wantOld, wantExisted)
	}
	return "upsert " + refKey(p)
}

func (f *fixture) delete() string {
	p := f.randPod()
	f.ref.delete(p)
	f.must("delete", f.typed.Delete(p), f.dropIn.Delete(p), f.cg.Delete(p))
	return "delete " + refKey(p)
}

func (f *fixture) replace() string {
	var list []*corev1.Pod
	var anyList []any
	for range f.rng.IntN(16) {
		p := f.randPod()
		list = append(list, p)
		anyList = append(anyList, p)
	}
	f.rv++
	rv := strconv.Itoa(f.rv)
	f.ref.replace(list, rv)
	f.must("replace", f.typed.Replace(list, rv), f.dropIn.Replace(slices.Clone(anyList), rv), f.cg.Replace(anyList, rv))
	return fmt.Sprintf("replace %d items", len(list))
}

func (f *fixture) bookmark() string {
	f.rv++
	rv := strconv.Itoa(f.rv)
	f.ref.rv = rv
	f.typed.Bookmark(rv)
	f.dropIn.Bookmark(rv)
	f.cg.Bookmark(rv)
	return "bookmark " + rv
}

// addIndexers adds one or two pool indexers not yet present, or, one time
// in four, retries a present one, which must fail everywhere and change
// nothing.
func (f *fixture) addIndexers() string {
	var names []string
	for name := range poolIndexers {
		names = append(names, name)
	}
	slices.Sort(names)
	f.rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	var picked []string
	for _, name := range names {
		if _, ok := f.ref.indexers[name]; !ok && len(picked) < 1+f.rng.IntN(2) {
			picked = append(picked, name)
		}
	}
	conflict := len(picked) == 0 || f.rng.IntN(4) == 0
	if conflict {
		picked = append(picked, NamespaceIndex)
	}
	typed, typedValue, untyped := Indexers[*corev1.Pod]{}, ValueIndexers[*corev1.Pod]{}, cache.Indexers{}
	for _, name := range picked {
		fn := poolIndexers[name]
		if name == NamespaceIndex {
			fn = f.ref.indexers[name]
		}
		if vfn := poolValueIndexers[name]; vfn != nil && !conflict {
			typedValue[name] = vfn
		} else {
			typed[name] = func(p *corev1.Pod) ([]string, error) { return fn(p), nil }
		}
		untyped[name] = func(obj any) ([]string, error) { return fn(obj.(*corev1.Pod)), nil }
	}
	typedErr := f.typed.AddIndexers(typed)
	if typedErr == nil {
		typedErr = f.typed.AddValueIndexers(typedValue)
	}
	errs := []error{typedErr, f.dropIn.AddIndexers(untyped), f.cg.AddIndexers(untyped)}
	for i, err := range errs {
		if (err != nil) != conflict {
			f.t.Fatalf("AddIndexers(%v) implementation %d: err %v, conflict %t", picked, i, err, conflict)
		}
	}
	if !conflict {
		for _, name := range picked {
			f.ref.indexers[name] = poolIndexers[name]
		}
	}
	return fmt.Sprintf("add indexers %v (conflict %t)", picked, conflict)
}
