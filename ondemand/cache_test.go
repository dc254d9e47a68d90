package ondemand_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/ondemand"
)

func TestFirstReadFetchesLaterReadsHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		for i := range 10 {
			create(t, srv, secret("ns", name(i), "v1", nil))
		}
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		if got := e.cache.Stats(); got.Objects != 10 || got.Held != 0 || got.Fetches != 0 {
			t.Fatalf("after sync: %+v; want 10 objects, none held, no fetch", got)
		}
		for range 3 {
			s, err := e.cache.Get(t.Context(), "ns", name(4))
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := srv.Get(t.Context(), secrets.GVR, "ns", name(4))
			want := stored.(*corev1.Secret)
			if d := cmp.Diff(want.Data, s.Data); d != "" || s.ResourceVersion != want.ResourceVersion {
				t.Fatalf("read %s rv %s, want rv %s; data diff:\n%s", s.Name, s.ResourceVersion, want.ResourceVersion, d)
			}
		}
		st := e.cache.Stats()
		if e.fetcher.gets.Load() != 1 || st.Fetches != 1 || st.Reads != 3 || st.Hits != 2 || st.Held != 1 || st.Promotions != 1 {
			t.Fatalf("3 reads of one object: %d gets, stats %+v; want 1 get, 3 reads, 2 hits, 1 held", e.fetcher.gets.Load(), st)
		}
		if st.HeldBytes <= 0 || st.MetadataBytes <= 0 {
			t.Fatalf("bytes not accounted: %+v", st)
		}
		if _, ok := e.cache.Held("ns", name(4)); !ok {
			t.Fatal("Held: the read object is not held")
		}
		snap := e.cache.Snapshot()
		if snap.Objects != 10 || !snap.Synced || snap.OnRead == nil || snap.OnRead.Held != 1 || snap.OnRead.Reads != 3 ||
			snap.Bytes != e.meta.Snapshot().Bytes+st.HeldBytes {
			t.Fatalf("Snapshot %+v (OnRead %+v); want the metadata informer's, 1 held, bytes of both", snap, snap.OnRead)
		}
		if _, ok := e.cache.Held("ns", name(5)); ok {
			t.Fatal("Held: an unread object is held")
		}
	})
}

func TestAChangeIsFetchedOnTheNextRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		s0 := create(t, srv, secret("ns", "a", "v1", nil))
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		if _, err := e.cache.Get(t.Context(), "ns", "a"); err != nil {
			t.Fatal(err)
		}
		s0.Data["key"] = []byte("v2")
		s1 := update(t, srv, s0)
		e.caughtUp(t)
		synctest.Wait() // the metadata handler has run
		if st := e.cache.Stats(); st.Held != 0 || st.Demotions[ondemand.DemotedChanged] != 1 {
			t.Fatalf("after a change: %+v; want the held object demoted as Changed", st)
		}
		got, err := e.cache.Get(t.Context(), "ns", "a")
		if err != nil {
			t.Fatal(err)
		}
		if dataOf(got) != "v2" || got.ResourceVersion != s1.ResourceVersion {
			t.Fatalf("read %q at %s; want v2 at %s", dataOf(got), got.ResourceVersion, s1.ResourceVersion)
		}
		if n := e.fetcher.gets.Load(); n != 2 {
			t.Fatalf("%d gets; want 2 (one per version read)", n)
		}
	})
}

func TestAReadNeverGoesBehindTheMetadata(t *testing.T) {
	// The held object is older than the metadata before the handler has
	// demoted it: the read must fetch, not hand out the held one.
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		s0 := create(t, srv, secret("ns", "a", "v1", nil))
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		if _, err := e.cache.Get(t.Context(), "ns", "a"); err != nil {
			t.Fatal(err)
		}
		s0.Data["key"] = []byte("v2")
		s1 := update(t, srv, s0)
		e.caughtUp(t) // the metadata store has v2; the handler may not have run
		got, err := e.cache.Get(t.Context(), "ns", "a")
		if err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != s1.ResourceVersion {
			t.Fatalf("read rv %s; want %s", got.ResourceVersion, s1.ResourceVersion)
		}
	})
}

func TestFetchFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind fake.FailureKind
		is   func(error) bool
	}{
		{"Forbidden", fake.Forbidden, apierrors.IsForbidden},
		{"TooManyRequests", fake.TooManyRequests, apierrors.IsTooManyRequests},
		{"InternalError", fake.InternalError, apierrors.IsInternalError},
		{"NotFound", fake.NotFound, apierrors.IsNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
				create(t, srv, secret("ns", "a", "v1", nil))
				e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
				// client-go's REST client retries a 429 itself, up to
				// ten times: fail more calls than it makes.
				if err := srv.FailNext(fake.Failure{Resource: secrets.GVR, Verbs: fake.VerbGet, Times: 20, Kind: tc.kind}); err != nil {
					t.Fatal(err)
				}
				_, err := e.cache.Get(t.Context(), "ns", "a")
				if !tc.is(err) {
					t.Fatalf("Get during a %v: %v", tc.kind, err)
				}
				if st := e.cache.Stats(); st.Held != 0 || st.FetchErrors != 1 {
					t.Fatalf("after the failed fetch: %+v; want nothing held, 1 fetch error", st)
				}
				srv.ClearFaults()
				got, err := e.cache.Get(t.Context(), "ns", "a")
				if err != nil || dataOf(got) != "v1" {
					t.Fatalf("Get after the fault: %v, %v", got, err)
				}
			})
		})
	}
}

func TestAFetchThatTimesOutHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		create(t, srv, secret("ns", "a", "v1", nil))
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		srv.Down()
		ctx, cancel := contextWithTimeout(t, time.Second)
		defer cancel()
		if _, err := e.cache.Get(ctx, "ns", "a"); err == nil {
			t.Fatal("Get with the server down succeeded")
		}
		srv.Up()
		if st := e.cache.Stats(); st.Held != 0 {
			t.Fatalf("held after a failed fetch: %+v", st)
		}
	})
}

func TestUnknownObjectsAreNotFoundWithoutARequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := start(t, t.Context(), nil, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		_, err := e.cache.Get(t.Context(), "ns", "missing")
		if !apierrors.IsNotFound(err) {
			t.Fatalf("Get of an unknown object: %v; want NotFound", err)
		}
		if n := e.fetcher.gets.Load(); n != 0 {
			t.Fatalf("%d gets for an object the metadata cache does not hold", n)
		}
	})
}

func TestADeletedObjectIsForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		s := create(t, srv, secret("ns", "a", "v1", nil))
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		if _, err := e.cache.Get(t.Context(), "ns", "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Delete(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		e.caughtUp(t)
		synctest.Wait()
		if _, err := e.cache.Get(t.Context(), "ns", "a"); !apierrors.IsNotFound(err) {
			t.Fatalf("Get after the delete: %v; want NotFound", err)
		}
		if st := e.cache.Stats(); st.Held != 0 || st.HeldBytes != 0 || st.Demotions[ondemand.DemotedDeleted] != 1 {
			t.Fatalf("after the delete: %+v", st)
		}
	})
}

func TestAnOlderAnswerIsNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		s0 := create(t, srv, secret("ns", "a", "v1", nil))
		s0.Data["key"] = []byte("v2")
		update(t, srv, s0)
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		e.fetcher.stale.Store(s0) // the first version
		_, err := e.cache.Get(t.Context(), "ns", "a")
		if !errors.Is(err, ondemand.ErrBehind) {
			t.Fatalf("Get answered older than the metadata: %v; want ErrBehind", err)
		}
		if st := e.cache.Stats(); st.Held != 0 || st.Behind != 1 || e.fetcher.gets.Load() != 3 {
			t.Fatalf("after stale answers: %+v, %d gets; want nothing held, 3 tries", st, e.fetcher.gets.Load())
		}
		e.fetcher.stale.Store(nil)
		if got, err := e.cache.Get(t.Context(), "ns", "a"); err != nil || dataOf(got) != "v2" {
			t.Fatalf("Get from a mended server: %v, %v", got, err)
		}
	})
}

func TestBudgetDemotesTheLeastRecentlyRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		big := string(make([]byte, 10<<10))
		for i := range 8 {
			create(t, srv, secret("ns", name(i), big, nil))
		}
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: 50 << 10})
		for i := range 8 {
			time.Sleep(time.Second) // distinct read stamps
			if _, err := e.cache.Get(t.Context(), "ns", name(i)); err != nil {
				t.Fatal(err)
			}
			if st := e.cache.Stats(); st.HeldBytes > st.Budget {
				t.Fatalf("after reading %d: %d bytes held over a budget of %d", i, st.HeldBytes, st.Budget)
			}
		}
		// The last read is held; the first ones were demoted first.
		if _, ok := e.cache.Held("ns", name(7)); !ok {
			t.Fatal("the most recently read object is not held")
		}
		if _, ok := e.cache.Held("ns", name(0)); ok {
			t.Fatal("the least recently read object is still held")
		}
		st := e.cache.Stats()
		if st.Demotions[ondemand.DemotedBudget] == 0 || st.Held+int(st.Demotions[ondemand.DemotedBudget]) != 8 {
			t.Fatalf("stats %+v: every promoted object is held or demoted for the budget", st)
		}
	})
}

func TestBudgetZeroHoldsMetadataOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		create(t, srv, secret("ns", "a", "v1", nil))
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{})
		for range 3 {
			if got, err := e.cache.Get(t.Context(), "ns", "a"); err != nil || dataOf(got) != "v1" {
				t.Fatalf("Get: %v, %v", got, err)
			}
		}
		if st := e.cache.Stats(); st.Held != 0 || st.HeldBytes != 0 || st.Fetches != 3 {
			t.Fatalf("budget 0: %+v; want nothing held, a fetch per read", st)
		}
	})
}

func TestIdleObjectsAreDemoted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		create(t, srv, secret("ns", "a", "v1", nil))
		create(t, srv, secret("ns", "b", "v1", nil))
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited, IdleAfter: time.Minute})
		for _, n := range []string{"a", "b"} {
			if _, err := e.cache.Get(t.Context(), "ns", n); err != nil {
				t.Fatal(err)
			}
		}
		// Read a every 30s for two minutes; b goes idle.
		for range 4 {
			time.Sleep(30 * time.Second)
			if _, err := e.cache.Get(t.Context(), "ns", "a"); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if _, ok := e.cache.Held("ns", "a"); !ok {
			t.Fatal("the object read every 30s was demoted")
		}
		if _, ok := e.cache.Held("ns", "b"); ok {
			t.Fatal("the object unread for 2m is still held")
		}
		if st := e.cache.Stats(); st.Demotions[ondemand.DemotedIdle] != 1 {
			t.Fatalf("stats %+v; want one idle demotion", st)
		}
	})
}

func TestHoldSelectsObjectsHeldFromTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		mine := map[string]string{"owner": "me"}
		for i := range 6 {
			var l map[string]string
			if i%2 == 0 {
				l = mine
			}
			create(t, srv, secret("ns", name(i), "v1", l))
		}
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited, IdleAfter: time.Minute,
			Hold: labels.SelectorFromSet(mine)})
		synctest.Wait()
		if st := e.cache.Stats(); st.Held != 3 || st.Pinned != 3 || e.fetcher.lists.Load() != 1 || e.fetcher.gets.Load() != 0 {
			t.Fatalf("after the start: %+v, %d lists, %d gets; want 3 pinned from one list", st, e.fetcher.lists.Load(), e.fetcher.gets.Load())
		}
		// A new matching object and a change to a held one are fetched
		// at once; pinned objects do not go idle.
		create(t, srv, secret("ns", "new", "v1", mine))
		s, _ := srv.Get(t.Context(), secrets.GVR, "ns", name(0))
		changed := s.(*corev1.Secret).DeepCopy()
		changed.Data["key"] = []byte("v2")
		update(t, srv, changed)
		e.caughtUp(t)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		for _, n := range []string{"new", name(0), name(2)} {
			got, ok := e.cache.Held("ns", n)
			if !ok {
				t.Fatalf("%s is not held", n)
			}
			if n == name(0) && dataOf(got) != "v2" {
				t.Fatalf("%s holds %q; want the new v2", n, dataOf(got))
			}
		}
		if n := e.fetcher.gets.Load(); n != 2 {
			t.Fatalf("%d gets; want 2 (the new object, the changed one)", n)
		}
		before := e.fetcher.gets.Load()
		if _, err := e.cache.Get(t.Context(), "ns", name(2)); err != nil {
			t.Fatal(err)
		}
		if e.fetcher.gets.Load() != before {
			t.Fatal("a read of a pinned object fetched")
		}
	})
}

func TestListReturnsWholeObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
		for i := range 5 {
			create(t, srv, secret("a", name(i), "v1", map[string]string{"i": name(i)}))
			create(t, srv, secret("b", name(i), "v1", nil))
		}
		e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
		if _, err := e.cache.Get(t.Context(), "a", name(1)); err != nil {
			t.Fatal(err)
		}
		got, err := e.cache.List(t.Context(), "a", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("List(a) = %d objects; want 5", len(got))
		}
		for _, s := range got {
			if s.Namespace != "a" || dataOf(s) != "v1" {
				t.Fatalf("List(a) gave %s/%s with %q", s.Namespace, s.Name, dataOf(s))
			}
		}
		if n := e.fetcher.lists.Load(); n != 1 {
			t.Fatalf("%d lists for 4 missing objects; want 1", n)
		}
		one, err := e.cache.List(t.Context(), "a", labels.SelectorFromSet(map[string]string{"i": name(1)}))
		if err != nil || len(one) != 1 || e.fetcher.lists.Load() != 1 {
			t.Fatalf("List of the held one: %d objects, %v, %d lists; want 1 from memory", len(one), err, e.fetcher.lists.Load())
		}
	})
}

func TestNewRefusesMissingOptions(t *testing.T) {
	if _, err := ondemand.New(t.Context(), ondemand.Options[*corev1.Secret]{}); err == nil {
		t.Fatal("New without Metadata succeeded")
	}
}
