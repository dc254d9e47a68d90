package shard_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
)

// TestRealServer checks the wire format against kube-apiserver v1.36,
// with the ShardedListAndWatch feature gate on (the server filters and
// echoes ShardInfo) and off (it ignores the selector; the client filters):
// each of three members lists, watches and caches exactly the objects its
// Matcher owns, and the members partition the collection, either way.
// Skipped under -short (it starts two apiservers).
func TestRealServer(t *testing.T) {
	for _, gate := range []bool{true, false} {
		t.Run(fmt.Sprintf("ShardedListAndWatch=%v", gate), func(t *testing.T) {
			t.Parallel()
			srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{
				ExtraAPIServerArgs: []string{fmt.Sprintf("--feature-gates=ShardedListAndWatch=%v", gate)},
			})
			if err != nil {
				t.Fatal(err)
			}
			realServerCase(t, kubernetes.NewForConfigOrDie(srv.AdminConfig()), gate)
		})
	}
}

func realServerCase(t *testing.T, cs kubernetes.Interface, gate bool) {
	ctx := t.Context()
	const ns = "sharded"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	create := func(name string) *corev1.ConfigMap {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	for i := range 150 {
		create(fmt.Sprintf("cm-%03d", i))
	}
	members := []string{"a", "b", "c"}
	asg := shard.MustAssign(members, shard.Options{Slices: 64})
	owned := func(m string) []string { // from a full list, by the client-side rule
		all, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cm := range all.Items {
			if asg.OwnerOfKey(string(cm.UID)) == m {
				out = append(out, cm.Name)
			}
		}
		return out
	}
	namesOf := func(items []corev1.ConfigMap) []string {
		var out []string
		for _, cm := range items {
			out = append(out, cm.Name)
		}
		return out
	}

	// Lists with the selector.
	total := 0
	for _, m := range members {
		sel, ok, err := asg.Selector(m, shard.FieldUID)
		if err != nil || !ok {
			t.Fatalf("%s: selector %v %v", m, ok, err)
		}
		list, err := cms.List(ctx, metav1.ListOptions{ShardSelector: sel})
		if err != nil {
			t.Fatalf("%s: list with the selector: %v", m, err)
		}
		if gate {
			if list.ShardInfo == nil || list.ShardInfo.Selector != sel {
				t.Fatalf("%s: ShardInfo = %+v, want the selector echoed", m, list.ShardInfo)
			}
			if got, want := namesOf(list.Items), owned(m); !slices.Equal(got, want) {
				t.Fatalf("%s: the server selected %v, the Matcher %v", m, got, want)
			}
			total += len(list.Items)
		} else if list.ShardInfo != nil || len(list.Items) != 150 {
			t.Fatalf("%s: without the gate: ShardInfo %+v, %d items", m, list.ShardInfo, len(list.Items))
		}
	}
	if gate && total != 150 {
		t.Fatalf("the members' lists hold %d objects, not 150", total)
	}

	if gate {
		longSelectors(t, cms)
	}

	// A sharded watch (gate on) delivers exactly the owned creations.
	if gate {
		sel, _, _ := asg.Selector("a", shard.FieldUID)
		list, _ := cms.List(ctx, metav1.ListOptions{ShardSelector: sel})
		w, err := cms.Watch(ctx, metav1.ListOptions{ShardSelector: sel, ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := 0; ; i++ {
			cm := create(fmt.Sprintf("w-%03d", i))
			if asg.OwnerOfKey(string(cm.UID)) == "a" {
				want = append(want, cm.Name)
				if len(want) == 5 {
					break
				}
			}
		}
		var got []string
		for len(got) < len(want) {
			ev := <-w.ResultChan()
			if ev.Type != watch.Added {
				t.Fatalf("watch event %v", ev.Type)
			}
			got = append(got, ev.Object.(*corev1.ConfigMap).Name)
		}
		w.Stop()
		if !slices.Equal(got, want) {
			t.Fatalf("sharded watch: %v, want %v", got, want)
		}
	}

	// Informers over shard.Source: each caches exactly its part.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type replica struct {
		src *shard.Source
		inf *informer.Informer[*corev1.ConfigMap]
	}
	var reps []replica
	done := make(chan error, len(members))
	for i, m := range members {
		src, err := shard.NewSource(ctx, shard.SourceOptions{Inner: reflector.FromClient(cms)})
		if err != nil {
			t.Fatal(err)
		}
		src.Update(shard.Change{Member: m, Assignment: asg})
		opts := informer.Options[*corev1.ConfigMap]{Source: src}
		if i == 0 { // paged lists, which carry ShardInfo; the others stream
			opts.Reflector.WatchList = reflector.WatchListOff
		}
		inf, err := informer.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- inf.Run(runCtx) }()
		reps = append(reps, replica{src, inf})
	}
	for _, r := range reps {
		if err := r.inf.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Changes after the sync reach their owners: write until every
	// member owns one, then wait for the last each owns (a member sees
	// only what it owns, so its resource version moves with those).
	lastOwned := map[string]*corev1.ConfigMap{}
	for j := 0; len(lastOwned) < len(members); j++ {
		cm := create(fmt.Sprintf("late-%02d", j))
		lastOwned[asg.OwnerOfKey(string(cm.UID))] = cm
	}
	for i, r := range reps {
		if err := r.inf.WaitForResourceVersion(ctx, lastOwned[members[i]].ResourceVersion); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range reps {
		var got []string
		for _, cm := range r.inf.Reader().List() {
			got = append(got, cm.Name)
		}
		slices.Sort(got)
		if want := owned(members[i]); !slices.Equal(got, want) {
			t.Errorf("%s caches %d objects, owns %d: %v\nwant %v", members[i], len(got), len(want), got, want)
		}
		filtered, known := r.src.ServerFiltered()
		if i == 0 && (!known || filtered != gate) {
			t.Errorf("%s: ServerFiltered = %v, %v with the gate %v", members[i], filtered, known, gate)
		}
		st := r.src.Stats()
		if dropped := st.DroppedObjects + st.DroppedEvents; gate && dropped != 0 || !gate && dropped == 0 {
			t.Errorf("%s: the client filter dropped %d objects and events with the gate %v", members[i], dropped, gate)
		}
		t.Logf("%s: %d objects cached; %+v", members[i], r.inf.Reader().Len(), st)
	}
	cancel()
	for range reps {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// longSelectors: the server's limit on selector length (its CEL parser's
// 100,000 characters). A member of a ring of two with the default slice
// count (its selector the longest the default makes, about 1,000 ranges)
// is served exactly; with 16384 slices the selector would be refused, so
// a Source sends a coarser one and filters the rest on the client.
func longSelectors(t *testing.T, cms typedcorev1.ConfigMapInterface) {
	ctx := t.Context()
	all, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned := func(a *shard.Assignment, m string) []string {
		var out []string
		for _, cm := range all.Items {
			if a.OwnerOfKey(string(cm.UID)) == m {
				out = append(out, cm.Name)
			}
		}
		return out
	}
	two := shard.MustAssign([]string{"a", "b"}, shard.Options{})
	sel, _, _ := two.Selector("a", shard.FieldUID)
	list, err := cms.List(ctx, metav1.ListOptions{ShardSelector: sel, ResourceVersion: all.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Fatalf("the default slices' longest selector (%d bytes, %d ranges): %v", len(sel), len(two.Ranges("a")), err)
	}
	var got []string
	for _, cm := range list.Items {
		got = append(got, cm.Name)
	}
	if want := owned(two, "a"); !slices.Equal(got, want) {
		t.Fatalf("the default slices' longest selector selected %d, the Matcher %d", len(got), len(want))
	}
	t.Logf("default slices, ring of two: a selector of %d bytes, %d ranges, accepted", len(sel), len(two.Ranges("a")))

	fine := shard.MustAssign([]string{"a", "b"}, shard.Options{Slices: 16384})
	long, _, _ := fine.Selector("a", shard.FieldUID)
	if _, err := cms.List(ctx, metav1.ListOptions{ShardSelector: long, Limit: 1}); err == nil {
		t.Fatalf("a selector of %d bytes was accepted", len(long))
	} else {
		t.Logf("a selector of %d bytes: %.120v", len(long), err)
	}
	src, err := shard.NewSource(ctx, shard.SourceOptions{Inner: reflector.FromClient(cms)})
	if err != nil {
		t.Fatal(err)
	}
	src.Update(shard.Change{Member: "a", Assignment: fine})
	l, err := src.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("a Source with 16384 slices: %v", err)
	}
	got = nil
	for _, cm := range l.(*corev1.ConfigMapList).Items {
		got = append(got, cm.Name)
	}
	slices.Sort(got)
	if want := owned(fine, "a"); !slices.Equal(got, want) {
		t.Fatalf("a Source with 16384 slices listed %d, owns %d", len(got), len(want))
	}
	if st := src.Stats(); st.ServerFiltered != 1 || st.DroppedObjects == 0 {
		t.Fatalf("a Source with 16384 slices: %+v, want a server-filtered list with some dropped here", st)
	}
}
