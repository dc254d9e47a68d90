package store

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

var checkSelectors = []labels.Selector{
	labels.Everything(),
	labels.SelectorFromSet(labels.Set{"app": "web"}),
	labels.SelectorFromSet(labels.Set{"app": "db", "tier": "be"}),
}

// keysOf maps objects to their keys, sorted, failing on an object that is
// not the very pointer the reference stores under that key.
func (f *fixture) keysOf(what string, objs any) []string {
	f.t.Helper()
	var keys []string
	add := func(p *corev1.Pod) {
		key := refKey(p)
		if f.ref.items[key] != p {
			f.t.Fatalf("%s: returned %s@%p, reference holds %p", what, key, p, f.ref.items[key])
		}
		keys = append(keys, key)
	}
	switch objs := objs.(type) {
	case []any:
		for _, o := range objs {
			add(o.(*corev1.Pod))
		}
	case []*corev1.Pod:
		for _, p := range objs {
			add(p)
		}
	}
	slices.Sort(keys)
	return keys
}

func (f *fixture) eq(what string, got, want []string) {
	f.t.Helper()
	if !slices.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
		f.t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// check compares every read of the three implementations with the
// reference, and the engines' internal invariants.
func (f *fixture) check(step string) {
	f.t.Helper()
	want := f.ref.keys()
	r := f.typed.Reader()
	f.eq(step+": typed List", f.keysOf(step+": typed List", r.List()), want)
	f.eq(step+": typed ListKeys", sorted(r.ListKeys()), want)
	for i, idx := range []cache.Indexer{f.dropIn, f.cg} {
		what := fmt.Sprintf("%s: indexer %d", step, i)
		f.eq(what+" List", f.keysOf(what+" List", idx.List()), want)
		f.eq(what+" ListKeys", sorted(idx.ListKeys()), want)
		if got := idx.LastStoreSyncResourceVersion(); got != f.ref.rv {
			f.t.Fatalf("%s rv %q, want %q", what, got, f.ref.rv)
		}
	}
	if got := r.LastSyncResourceVersion(); got != f.ref.rv || r.Len() != len(want) {
		f.t.Fatalf("%s: typed rv %q len %d, want %q %d", step, got, r.Len(), f.ref.rv, len(want))
	}
	if st := r.Stats(); st.Objects != len(want) || st.ResourceVersion != f.ref.rv || st.Replacing != f.ref.inSession ||
		st.IndexValues[NamespaceIndex] != len(f.ref.indexValues(NamespaceIndex)) {
		f.t.Fatalf("%s: Stats %+v", step, st)
	}
	f.checkGets(step)
	for name := range f.ref.indexers {
		f.checkIndex(step, name)
	}
	f.checkUnknownIndex(step)
	f.checkNamespaces(step)
	f.must(step+": typed invariants", checkCore(f.typed.r.c))
	f.must(step+": drop-in invariants", checkCore(f.dropIn.(*cacheIndexer).c))
}

func (f *fixture) checkGets(step string) {
	f.t.Helper()
	r := f.typed.Reader()
	for _, ns := range randNamespaces {
		for _, name := range randNames {
			key := name
			if ns != "" {
				key = ns + "/" + name
			}
			want, wantOK := f.ref.items[key]
			got, ok := r.GetByKey(key)
			nsGot, nsOK := r.Namespace(ns).Get(name)
			if ok != wantOK || got != want || nsOK != wantOK || nsGot != want {
				f.t.Fatalf("%s: typed get %q = %p %t / %p %t, want %p %t", step, key, got, ok, nsGot, nsOK, want, wantOK)
			}
			probe := &corev1.Pod{}
			probe.Namespace, probe.Name = ns, name
			if got, ok, err := r.Get(probe); err != nil || ok != wantOK || got != want {
				f.t.Fatalf("%s: typed Get(%q) = %p %t %v, want %p", step, key, got, ok, err, want)
			}
			for i, idx := range []cache.Indexer{f.dropIn, f.cg} {
				obj, ok, err := idx.GetByKey(key)
				obj2, ok2, err2 := idx.Get(probe)
				if err != nil || err2 != nil || ok != wantOK || ok2 != wantOK || (ok && (obj.(*corev1.Pod) != want || obj2 != obj)) {
					f.t.Fatalf("%s: indexer %d get %q = %v %t %v / %v %t %v, want %p", step, i, key, obj, ok, err, obj2, ok2, err2, want)
				}
			}
		}
	}
}

func (f *fixture) checkIndex(step, name string) {
	f.t.Helper()
	r := f.typed.Reader()
	values := f.ref.indexValues(name)
	got, err := r.ListIndexValues(name)
	f.must(step, err)
	f.eq(step+": typed ListIndexValues "+name, got, values)
	for i, idx := range []cache.Indexer{f.dropIn, f.cg} {
		f.eq(fmt.Sprintf("%s: indexer %d ListIndexFuncValues %s", step, i, name), sorted(idx.ListIndexFuncValues(name)), values)
	}
	for _, v := range append(values, "missing") {
		want := f.ref.byIndex(name, v)
		what := fmt.Sprintf("%s: index %s=%q", step, name, v)
		objs, err := r.ByIndex(name, v)
		keys, err2 := r.IndexKeys(name, v)
		f.must(what, err, err2)
		f.eq(what+" typed ByIndex", f.keysOf(what, objs), want)
		f.eq(what+" typed IndexKeys", keys, want)
		for i, idx := range []cache.Indexer{f.dropIn, f.cg} {
			objs, err := idx.ByIndex(name, v)
			keys, err2 := idx.IndexKeys(name, v)
			f.must(what, err, err2)
			f.eq(fmt.Sprintf("%s indexer %d ByIndex", what, i), f.keysOf(what, objs), want)
			f.eq(fmt.Sprintf("%s indexer %d IndexKeys", what, i), keys, want)
		}
	}
	for range 2 {
		probe := f.randPod()
		want := f.ref.matching(name, probe)
		objs, err := r.Index(name, probe)
		f.must(step, err)
		f.eq(step+": typed Index "+name, f.keysOf(step, objs), want)
		for i, idx := range []cache.Indexer{f.dropIn, f.cg} {
			objs, err := idx.Index(name, probe)
			f.must(step, err)
			f.eq(fmt.Sprintf("%s: indexer %d Index %s", step, i, name), f.keysOf(step, objs), want)
		}
	}
}

func (f *fixture) checkUnknownIndex(step string) {
	f.t.Helper()
	r := f.typed.Reader()
	_, err1 := r.ByIndex("nope", "x")
	_, err2 := r.IndexKeys("nope", "x")
	_, err3 := r.Index("nope", f.randPod())
	_, err4 := r.ListIndexValues("nope")
	for _, err := range []error{err1, err2, err3, err4} {
		if !errors.Is(err, ErrUnknownIndex) {
			f.t.Fatalf("%s: typed unknown index: %v", step, err)
		}
	}
	for i, idx := range []cache.Indexer{f.dropIn, f.cg} {
		_, err1 := idx.ByIndex("nope", "x")
		_, err2 := idx.IndexKeys("nope", "x")
		_, err3 := idx.Index("nope", f.randPod())
		if err1 == nil || err2 == nil || err3 == nil || len(idx.ListIndexFuncValues("nope")) != 0 {
			f.t.Fatalf("%s: indexer %d unknown index: %v %v %v", step, i, err1, err2, err3)
		}
	}
}

// checkNamespaces compares the namespace-scoped typed reader and client-go's
// generated pod lister (over both indexers) with the reference.
func (f *fixture) checkNamespaces(step string) {
	f.t.Helper()
	r := f.typed.Reader()
	listers := []corev1listers.PodLister{corev1listers.NewPodLister(f.dropIn), corev1listers.NewPodLister(f.cg)}
	for _, ns := range randNamespaces {
		for si, sel := range checkSelectors {
			want := f.ref.namespaceList(ns, sel)
			what := fmt.Sprintf("%s: namespace %q selector %d", step, ns, si)
			f.eq(what+" typed", f.keysOf(what, r.Namespace(ns).List(sel)), want)
			if ns == "" {
				f.eq(what+" typed ListBySelector", f.keysOf(what, r.ListBySelector(sel)), want)
			}
			for i, l := range listers {
				got, err := l.Pods(ns).List(sel)
				f.must(what, err)
				f.eq(fmt.Sprintf("%s lister %d", what, i), f.keysOf(what, got), want)
			}
		}
	}
}
