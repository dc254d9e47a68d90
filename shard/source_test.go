package shard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/fake"
)

// fakePods is a fake apiserver holding n pods with random uids, serving
// shard selectors as mode says, and a ListerWatcher on its pods.
func fakePods(t *testing.T, mode fake.ShardSelectorMode, n int) (*fake.Server, []*corev1.Pod, cache.ListerWatcherWithContext) {
	t.Helper()
	srv := fake.NewTestServer(t, fake.Options{UIDSeed: 21, ShardSelectors: mode})
	var pods []*corev1.Pod
	for i := range n {
		p, err := srv.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p%03d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p.(*corev1.Pod))
	}
	return srv, pods, srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR})
}

// calls returns the server's calls of verb, in order.
func calls(srv *fake.Server, verb fake.Verb) []metav1.ListOptions {
	var out []metav1.ListOptions
	for _, c := range srv.Calls() {
		if c.Verb == verb {
			out = append(out, c.Options)
		}
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

func ownedNames(pods []*corev1.Pod, a *Assignment, member string) []string {
	var out []string
	for _, p := range pods {
		if a.OwnerOfKey(string(p.UID)) == member {
			out = append(out, p.Name)
		}
	}
	return out
}

func changeFor(a *Assignment, member string) Change {
	return Change{Member: member, Assignment: a, Diff: Diff{Gained: a.Owned(member)}}
}

func TestSourceListsOnlyOwned(t *testing.T) {
	for _, mode := range []fake.ShardSelectorMode{fake.ShardSelectorsIgnored, fake.ShardSelectorsApplied, fake.ShardSelectorsUnechoed} {
		t.Run(fmt.Sprintf("mode %d", mode), func(t *testing.T) {
			srv, pods, lw := fakePods(t, mode, 200)
			a := MustAssign([]string{"a", "b", "c"}, Options{Slices: 64})
			want := ownedNames(pods, a, "b")
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
			if got := calls(srv, fake.VerbList)[0].ShardSelector; got != sel {
				t.Fatalf("sent selector %q, want %q", got, sel)
			}
			echoed := mode == fake.ShardSelectorsApplied
			if filtered, known := s.ServerFiltered(); filtered != echoed || !known {
				t.Fatalf("ServerFiltered = %v, %v", filtered, known)
			}
			st := s.Stats()
			wantStats := SourceStats{Lists: 1, Reassignments: 1}
			switch mode {
			case fake.ShardSelectorsApplied:
				wantStats.ServerFiltered = 1
			case fake.ShardSelectorsIgnored:
				wantStats.DroppedObjects = int64(len(pods) - len(want))
			}
			if st != wantStats {
				t.Fatalf("Stats = %+v, want %+v", st, wantStats)
			}
		})
	}
}

func TestSourceListWaitsForAssignment(t *testing.T) {
	_, _, lw := fakePods(t, fake.ShardSelectorsApplied, 0)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
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
	if _, err := NewSource(t.Context(), SourceOptions{Inner: lw, Field: "metadata.name"}); err == nil {
		t.Fatal("NewSource with an unsupported field")
	}
}

func TestSourceOwningNothingListsNothing(t *testing.T) {
	srv, _, lw := fakePods(t, fake.ShardSelectorsIgnored, 20)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a"}, Options{Slices: 8})
	s.Update(changeFor(a, "stranger"))
	list, err := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if got := list.(*corev1.PodList); len(got.Items) != 0 || got.Continue != "" || got.ResourceVersion != "20" {
		t.Fatalf("list = %d items, continue %q, rv %q", len(got.Items), got.Continue, got.ResourceVersion)
	}
	if sent := calls(srv, fake.VerbList)[0]; sent.ShardSelector != "" || sent.Limit != 1 {
		t.Fatalf("sent %+v", sent)
	}
}

// TestSourcePagesKeepTheirPart: an Update between pages does not change
// the selector of the pages that follow; the watch after that list is
// refused with 410, so the reflector relists.
func TestSourcePagesKeepTheirPart(t *testing.T) {
	srv, _, lw := fakePods(t, fake.ShardSelectorsApplied, 100)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
	s.Update(changeFor(a, "a"))
	first, _ := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 10})
	s.Update(changeFor(a.Without("b"), "a"))
	if _, err := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 10, Continue: first.(*corev1.PodList).Continue}); err != nil {
		t.Fatal(err)
	}
	if lists := calls(srv, fake.VerbList); lists[1].ShardSelector != lists[0].ShardSelector {
		t.Fatal("a page changed selector within one list")
	}
	if _, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "100"}); !apierrors.IsResourceExpired(err) {
		t.Fatalf("watch after a stale list: %v, want 410", err)
	}
	if _, err := s.ListWithContext(t.Context(), metav1.ListOptions{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "100"})
	if err != nil {
		t.Fatalf("watch after a fresh list: %v", err)
	}
	w.Stop()
}

// TestSourceWatchFiltersAndExpires: events of other members' objects are
// dropped (a server without the gate sends them all), bookmarks pass, and
// an Update ends the watch with 410 Gone and stops the server's watch.
func TestSourceWatchFiltersAndExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, pods, lw := fakePods(t, fake.ShardSelectorsIgnored, 40)
		s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
		a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
		s.Update(changeFor(a, "a"))
		w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "40", AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			p = p.DeepCopy()
			p.Labels = map[string]string{"touched": "yes"}
			if _, err := srv.Update(t.Context(), p); err != nil {
				t.Fatal(err)
			}
		}
		want := ownedNames(pods, a, "a")
		var got []string
		for range want {
			ev := <-w.ResultChan()
			got = append(got, ev.Object.(*corev1.Pod).Name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("events for %v, want %v", got, want)
		}
		if ev := <-w.ResultChan(); ev.Type != watch.Bookmark { // after a minute
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
		if n := srv.CloseWatches(fake.GVR{}); n != 0 {
			t.Fatalf("the server's watch was not stopped: %d open", n)
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

// otherShardInfo is a server that says it applied another selector than
// the one sent: what fake/ cannot be asked to do.
type otherShardInfo struct {
	cache.ListerWatcherWithContext
	echo string
}

func (o otherShardInfo) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l, err := o.ListerWatcherWithContext.ListWithContext(ctx, opts)
	if err == nil {
		l.(*corev1.PodList).ShardInfo = &metav1.ShardInfo{Selector: o.echo}
	}
	return l, err
}

// TestSourceRefusesAnotherSelector: a list filtered by a selector other
// than the one sent may lack owned objects; the Source fails it.
func TestSourceRefusesAnotherSelector(t *testing.T) {
	_, _, lw := fakePods(t, fake.ShardSelectorsApplied, 10)
	a := MustAssign([]string{"a", "b"}, Options{Slices: 16})
	other, _, _ := a.Selector("b", FieldUID)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: otherShardInfo{lw, other}})
	s.Update(changeFor(a, "a"))
	if _, err := s.ListWithContext(t.Context(), metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "not the one sent") {
		t.Fatalf("List = %v", err)
	}
}

// TestSourceIgnoresChangesOfOthers: a Change that moves only other
// members' slices keeps the watch open.
func TestSourceIgnoresChangesOfOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, lw := fakePods(t, fake.ShardSelectorsApplied, 0)
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
	srv, _, lw := fakePods(t, fake.ShardSelectorsApplied, 0)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a", "b"}, Options{Slices: 8})
	s.Update(Change{Member: "a", Assignment: a, Withheld: a.Owned("a")})
	w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')"
	if got := calls(srv, fake.VerbWatch)[0].ShardSelector; got != want {
		t.Fatalf("watch selector %q, want %q", got, want)
	}
}

// TestSourceLeavesWithheldOut: slices withheld by a fenced Change are not
// in the Source's selector nor owned by it; the Change that hands them out
// puts them back.
func TestSourceLeavesWithheldOut(t *testing.T) {
	srv, pods, lw := fakePods(t, fake.ShardSelectorsApplied, 200)
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
	for _, p := range pods {
		if m.Owns(p) {
			want = append(want, p.Name)
		}
	}
	if got := names(list); !slices.Equal(got, want) || len(want) == 0 || len(want) >= len(ownedNames(pods, a, "a")) {
		t.Fatalf("listed %d, want %d of the %d a owns", len(got), len(want), len(ownedNames(pods, a, "a")))
	}
	sel, _, _ := c.Selector(FieldUID)
	if got := calls(srv, fake.VerbList)[0].ShardSelector; got != sel {
		t.Fatalf("sent %q, want %q", got, sel)
	}
	s.Update(Change{Member: "a", Assignment: a, Previous: a, Diff: Diff{Gained: withheld}})
	full, _, _ := a.Selector("a", FieldUID)
	list, err = s.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, sent := names(list), calls(srv, fake.VerbList)[1].ShardSelector; !slices.Equal(got, ownedNames(pods, a, "a")) || sent != full {
		t.Fatalf("after the release: listed %d with %q", len(got), sent)
	}
}

// stubCache is a cacheView over a fixed set of objects.
type stubCache struct{ objs []runtime.Object }

func (c *stubCache) objects(context.Context, string) ([]runtime.Object, error) { return c.objs, nil }

// TestSourceCycleNotTakenIsNotListed: a relist the reflector abandons
// (here a streaming list from the cache stopped before its end bookmark)
// does not count as listed: the next relist lists the gained slices
// again, and nothing is announced meanwhile.
func TestSourceCycleNotTakenIsNotListed(t *testing.T) {
	srv, pods, lw := fakePods(t, fake.ShardSelectorsApplied, 200)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	relists := 0
	s.RelistWith(func() { relists++ })
	c := &stubCache{}
	s.st.cache = c
	two := MustAssign([]string{"a", "b"}, Options{Slices: 16})
	s.Update(changeFor(two, "a"))
	list, err := s.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.(*corev1.PodList).ResourceVersion
	for i := range list.(*corev1.PodList).Items {
		c.objs = append(c.objs, &list.(*corev1.PodList).Items[i])
	}
	w, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()

	// b leaves: a streaming relist from the cache, abandoned.
	one := two.Without("b")
	s.Update(Change{Member: "a", Assignment: one, Previous: two, Diff: Diff{Gained: two.Owned("b")}})
	if relists != 1 { // this Change's (before the first, lists wait for it)
		t.Fatalf("%d relists asked for", relists)
	}
	gained, _, _ := two.Selector("b", FieldUID)
	stream, err := s.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: rv, SendInitialEvents: ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	<-stream.ResultChan() // one initial event, then the reflector moves on
	stream.Stop()

	// The next relist (paginated) lists b's slices again.
	s.requestRelist()
	before := len(calls(srv, fake.VerbList))
	relisted, err := s.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	sent := calls(srv, fake.VerbList)[before:]
	if len(sent) != 1 || sent[0].ShardSelector != gained || sent[0].ResourceVersionMatch != metav1.ResourceVersionMatchExact {
		t.Fatalf("the relist after an abandoned one sent %v, want one list of b's slices", sent)
	}
	if got := names(relisted); len(got) != len(pods) {
		t.Fatalf("relisted %d pods, want all %d", len(got), len(pods))
	}
}

// TestSourceCoarseSelector: a part too scattered for the server's selector
// limit is sent as a coarser selector; the server's list, echoed as
// applied, is still filtered on the client, so the source serves exactly
// the member's objects.
func TestSourceCoarseSelector(t *testing.T) {
	srv, pods, lw := fakePods(t, fake.ShardSelectorsApplied, 300)
	s, _ := NewSource(t.Context(), SourceOptions{Inner: lw})
	a := MustAssign([]string{"a", "b"}, Options{Slices: 65536})
	s.Update(changeFor(a, "a"))
	list, err := s.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(list), ownedNames(pods, a, "a"); !slices.Equal(got, want) {
		t.Fatalf("listed %d, own %d", len(got), len(want))
	}
	if sent := calls(srv, fake.VerbList)[0].ShardSelector; len(sent) > maxSelectorLength {
		t.Fatalf("sent a selector of %d characters", len(sent))
	}
	if st := s.Stats(); st.ServerFiltered != 1 || st.DroppedObjects == 0 {
		t.Fatalf("Stats = %+v, want a server-filtered list with objects dropped here", st)
	}
}
