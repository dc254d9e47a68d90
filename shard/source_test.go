package shard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// fakeLW is a ListerWatcher over fixed pods. With honour it applies the
// shard selector as a KEP-5866 server does (apimachinery's Matches) and
// echoes it in ShardInfo; without, it ignores it, as an older server does.
type fakeLW struct {
	honour bool
	echo   string // if set, the ShardInfo echoed instead of the selector sent
	pods   []corev1.Pod
	page   int // page size when a list asks for Limit (0: no paging)

	mu      sync.Mutex
	lists   []metav1.ListOptions
	watches []*watch.FakeWatcher
	wopts   []metav1.ListOptions
}

func (f *fakeLW) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	f.lists = append(f.lists, opts)
	f.mu.Unlock()
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}
	var pods []corev1.Pod
	for _, p := range f.pods {
		if f.honour && opts.ShardSelector != "" {
			sel, err := ParseSelector(opts.ShardSelector)
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			if ok, _ := sel.Matches(&p); !ok {
				continue
			}
		}
		pods = append(pods, p)
	}
	if f.honour && opts.ShardSelector != "" {
		list.ShardInfo = &metav1.ShardInfo{Selector: opts.ShardSelector}
		if f.echo != "" {
			list.ShardInfo.Selector = f.echo
		}
	}
	if opts.Limit > 0 && f.page > 0 {
		start := 0
		if opts.Continue != "" {
			fmt.Sscanf(opts.Continue, "%d", &start)
		}
		end := min(start+f.page, len(pods))
		if end < len(pods) {
			list.Continue = fmt.Sprint(end)
		}
		pods = pods[start:end]
	}
	list.Items = pods
	return list, nil
}

func (f *fakeLW) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := watch.NewFakeWithChanSize(100, false)
	f.watches = append(f.watches, w)
	f.wopts = append(f.wopts, opts)
	return w, nil
}

func randomPods(r *rand.Rand, n int) []corev1.Pod {
	var out []corev1.Pod
	for i := range n {
		out = append(out, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p%d", i),
			UID: types.UID(randomUID(r)), ResourceVersion: "5"}})
	}
	return out
}

func names(list runtime.Object) []string {
	var out []string
	for _, p := range list.(*corev1.PodList).Items {
		out = append(out, p.Name)
	}
	return out
}

func ownedNames(pods []corev1.Pod, a *Assignment, member string) []string {
	var out []string
	for i := range pods {
		if a.OwnerOfKey(string(pods[i].UID)) == member {
			out = append(out, pods[i].Name)
		}
	}
	return out
}

func changeFor(a *Assignment, member string) Change {
	return Change{Member: member, Assignment: a, Diff: Diff{Gained: a.Owned(member)}}
}

func TestSourceListsOnlyOwned(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	pods := randomPods(r, 200)
	a := MustAssign([]string{"a", "b", "c"}, Options{Slices: 64})
	want := ownedNames(pods, a, "b")
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("server applies selectors: %v", honour), func(t *testing.T) {
			lw := &fakeLW{honour: honour, pods: pods}
			s, err := NewSource(t.Context(), SourceOptions{Inner: lw})
			if err != nil {
				t.Fatal(err)
			}
			if _, known := s.ServerFiltered(); known {
				t.Fatal("ServerFiltered known before a list")
			}
			s.OnChange(changeFor(a, "b"))
			list, err := s.ListWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(list); !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
			sel, _, _ := a.Selector("b", FieldUID)
			if lw.lists[0].ShardSelector != sel {
				t.Fatalf("sent selector %q, want %q", lw.lists[0].ShardSelector, sel)
			}
			if filtered, known := s.ServerFiltered(); filtered != honour || !known {
				t.Fatalf("ServerFiltered = %v, %v", filtered, known)
			}
			st := s.Stats()
			wantStats := SourceStats{Lists: 1, Reassignments: 1, DroppedObjects: int64(len(pods) - len(want))}
			if honour {
				wantStats.ServerFiltered, wantStats.DroppedObjects = 1, 0
			}
			if st != wantStats {
				t.Fatalf("Stats = %+v, want %+v", st, wantStats)
			}
		})
	}
}

func TestSourceListWaitsForAssignment(t *testing.T) {
	s, _ := NewSource(t.Context(), SourceOptions{Inner: &fakeLW{}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.ListWithContext(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("List without an assignment returned")
	}
	if _, err := s.WatchWithContext(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("Watch without an assignment returned")
	}
	if s.Owns(testObject("ns", "x")) {
		t.Fatal("Owns before any Change")
	}
	if _, err := NewSource(t.Context(), SourceOptions{}); err == nil {
		t.Fatal("NewSource without Inner")
	}
	if _, err := NewSource(t.Context(), SourceOptions{Inner: &fakeLW{}, Field: "metadata.name"}); err == nil {
		t.Fatal("NewSource with an unsupported field")
	}
}

func TestSourceOwningNothingListsNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	lw := &fakeLW{pods: randomPods(r, 20), page: 5}
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a"}, Options{Slices: 8})
	s.Update(changeFor(a, "stranger"))
	list, err := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if got := list.(*corev1.PodList); len(got.Items) != 0 || got.Continue != "" || got.ResourceVersion != "10" {
		t.Fatalf("list = %d items, continue %q, rv %q", len(got.Items), got.Continue, got.ResourceVersion)
	}
	if lw.lists[0].ShardSelector != "" || lw.lists[0].Limit != 1 {
		t.Fatalf("sent %+v", lw.lists[0])
	}
}

// TestSourcePagesKeepTheirPart: an Update between pages does not change
// the selector of the pages that follow; the watch after that list is
// refused with 410, so the reflector relists.
func TestSourcePagesKeepTheirPart(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	lw := &fakeLW{honour: true, pods: randomPods(r, 100), page: 10}
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
	s.Update(changeFor(a, "a"))
	first, _ := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 10})
	s.Update(changeFor(a.Without("b"), "a"))
	if _, err := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 10, Continue: first.(*corev1.PodList).Continue}); err != nil {
		t.Fatal(err)
	}
	if lw.lists[1].ShardSelector != lw.lists[0].ShardSelector {
		t.Fatal("a page changed selector within one list")
	}
	if _, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "10"}); !apierrors.IsResourceExpired(err) {
		t.Fatalf("watch after a stale list: %v, want 410", err)
	}
	if _, err := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "10"})
	if err != nil {
		t.Fatalf("watch after a fresh list: %v", err)
	}
	w.Stop()
}

// TestSourceWatchFiltersAndExpires: events of other members' objects are
// dropped, bookmarks pass, and an Update ends the watch with 410 Gone and
// stops the server's watch.
func TestSourceWatchFiltersAndExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(27, 28))
		pods := randomPods(r, 40)
		lw := &fakeLW{pods: pods}
		s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
		a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
		s.Update(changeFor(a, "a"))
		w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "10", AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		inner := lw.watches[0]
		for i := range pods {
			inner.Modify(&pods[i])
		}
		inner.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "11"}})
		want := ownedNames(pods, a, "a")
		var got []string
		for range want {
			ev := <-w.ResultChan()
			got = append(got, ev.Object.(*corev1.Pod).Name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("events for %v, want %v", got, want)
		}
		if ev := <-w.ResultChan(); ev.Type != watch.Bookmark {
			t.Fatalf("after the owned events: %v, want the bookmark", ev.Type)
		}
		if got := s.Stats().DroppedEvents; got != int64(len(pods)-len(want)) {
			t.Fatalf("DroppedEvents = %d, want %d", got, len(pods)-len(want))
		}
		s.Update(changeFor(a.Without("b"), "a"))
		ev, ok := <-w.ResultChan()
		if !ok || ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
			t.Fatalf("after Update: %v %v, want a 410 error event", ev, ok)
		}
		if _, ok := <-w.ResultChan(); ok {
			t.Fatal("the watch goes on after its 410")
		}
		synctest.Wait()
		if !inner.IsStopped() {
			t.Fatal("the server's watch was not stopped")
		}
		w.Stop()
	})
}

func TestShardInfoOf(t *testing.T) {
	const sel = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
	u := &unstructured.UnstructuredList{Object: map[string]any{"metadata": map[string]any{"shardInfo": map[string]any{"selector": sel}}}}
	pm := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ShardInfo: &metav1.ShardInfo{Selector: sel}}}
	for _, tc := range []struct {
		name string
		list runtime.Object
		want string
		ok   bool
	}{
		{"unstructured", u, sel, true},
		{"metadata", pm, sel, true},
		{"typed without", &corev1.PodList{}, "", false},
		{"unstructured without", &unstructured.UnstructuredList{Object: map[string]any{}}, "", false},
		{"not a list", &corev1.Pod{}, "", false},
	} {
		if got, ok := shardInfoOf(tc.list); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q, %v", tc.name, got, ok)
		}
	}
}

func TestSameSelector(t *testing.T) {
	a := MustAssign([]string{"a", "b", "c"}, Options{Slices: 64})
	sel, _, _ := a.Selector("a", FieldUID)
	terms := strings.Split(sel, " || ")
	slices.Reverse(terms)
	reordered := strings.Join(terms, " || ")
	other, _, _ := a.Selector("b", FieldUID)
	ns, _, _ := a.Selector("a", FieldNamespace)
	for _, tc := range []struct {
		x, y string
		want bool
	}{{sel, sel, true}, {sel, reordered, true}, {sel, other, false}, {sel, ns, false}, {sel, "junk", false}, {"junk", sel, false}} {
		if got := sameSelector(tc.x, tc.y); got != tc.want {
			t.Errorf("sameSelector(%.40q, %.40q) = %v", tc.x, tc.y, got)
		}
	}
	if len(terms) < 2 {
		t.Fatal("the test needs a selector of several terms")
	}
}

// TestSourceRefusesAnotherSelector: a list filtered by a selector other
// than the one sent may lack owned objects; the Source fails it.
func TestSourceRefusesAnotherSelector(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
	other, _, _ := a.Selector("b", FieldUID)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: &fakeLW{honour: true, echo: other, pods: randomPods(r, 10)}})
	s.Update(changeFor(a, "a"))
	if _, err := s.ListWithContext(t.Context(), metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "not the one sent") {
		t.Fatalf("List = %v", err)
	}
}

// TestSourceIgnoresChangesOfOthers: a Change that moves only other
// members' slices keeps the watch open.
func TestSourceIgnoresChangesOfOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &fakeLW{}
		s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
		// A ring where c's departure gives a's nothing: find one.
		var a3 *Assignment
		for i := 0; a3 == nil; i++ {
			cand := MustAssign([]string{"a", "b", fmt.Sprintf("c%d", i)}, Options{Slices: 16})
			if d, _ := DiffFor(cand, cand.Without(fmt.Sprintf("c%d", i)), "a"); d.Empty() {
				a3 = cand
			}
		}
		s.Update(changeFor(a3, "a"))
		w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Update(changeFor(a3.Without(a3.Members()[2]), "a"))
		synctest.Wait()
		select {
		case ev := <-w.ResultChan():
			t.Fatalf("the watch got %v after a change that left a's part alone", ev.Type)
		default:
		}
		if got := s.Stats().Reassignments; got != 1 {
			t.Fatalf("Reassignments = %d, want 1", got)
		}
		w.Stop()
	})
}

// TestSourceOwningNothingWatchesOneHash: a member that owns nothing (or
// has everything withheld) must not watch with an empty selector, which
// means everything: it asks for the single hash 0.
func TestSourceOwningNothingWatchesOneHash(t *testing.T) {
	lw := &fakeLW{}
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a", "b"}, Options{Slices: 8})
	s.Update(Change{Member: "a", Assignment: a, Withheld: a.Owned("a")})
	w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')"
	if got := lw.wopts[0].ShardSelector; got != want {
		t.Fatalf("watch selector %q, want %q", got, want)
	}
	if _, err := ParseSelector(want); err != nil {
		t.Fatalf("the one-hash selector does not parse: %v", err)
	}
}

// TestSourceLeavesWithheldOut: slices withheld by a fenced Change are not
// in the Source's selector nor owned by it; the Change that hands them out
// puts them back.
func TestSourceLeavesWithheldOut(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	pods := randomPods(r, 200)
	lw := &fakeLW{honour: true, pods: pods}
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
	owned := a.Owned("a")
	withheld := owned[:len(owned)/2]
	c := Change{Member: "a", Assignment: a, Diff: Diff{Gained: owned[len(owned)/2:]}, Withheld: withheld}
	s.Update(c)
	list, err := s.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Matcher(FieldUID)
	var want []string
	for i := range pods {
		if m.Owns(&pods[i]) {
			want = append(want, pods[i].Name)
		}
	}
	if got := names(list); !slices.Equal(got, want) || len(want) == 0 || len(want) >= len(ownedNames(pods, a, "a")) {
		t.Fatalf("listed %d, want %d of the %d a owns", len(got), len(want), len(ownedNames(pods, a, "a")))
	}
	sel, _, _ := c.Selector(FieldUID)
	if lw.lists[0].ShardSelector != sel {
		t.Fatalf("sent %q, want %q", lw.lists[0].ShardSelector, sel)
	}
	s.Update(Change{Member: "a", Assignment: a, Previous: a, Diff: Diff{Gained: withheld}})
	full, _, _ := a.Selector("a", FieldUID)
	list, err = s.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); !slices.Equal(got, ownedNames(pods, a, "a")) || lw.lists[1].ShardSelector != full {
		t.Fatalf("after the release: listed %d with %q", len(got), lw.lists[1].ShardSelector)
	}
}
