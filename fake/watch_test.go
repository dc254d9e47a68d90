package fake

import (
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func openWatch(t *testing.T, lw *ListerWatcher, opts metav1.ListOptions) watch.Interface {
	t.Helper()
	w, err := lw.WatchWithContext(t.Context(), opts)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	t.Cleanup(w.Stop)
	return w
}

func TestWatchStartingPoints(t *testing.T) {
	cases := []struct {
		name string
		opts metav1.ListOptions
		want []string
	}{
		{"from rv replays history", metav1.ListOptions{ResourceVersion: "2"},
			[]string{"ADDED ns/c@3", "MODIFIED ns/a@4", "DELETED ns/b@5", "ADDED ns/d@6"}},
		{"legacy most recent opens with state", metav1.ListOptions{},
			[]string{"ADDED ns/a@4", "ADDED ns/c@3", "ADDED ns/d@6"}},
		{"legacy any opens with state", metav1.ListOptions{ResourceVersion: "0"},
			[]string{"ADDED ns/a@4", "ADDED ns/c@3", "ADDED ns/d@6"}},
		{"no initial events", metav1.ListOptions{SendInitialEvents: new(false), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			[]string{"ADDED ns/d@6"}},
		{"streaming list", metav1.ListOptions{SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true},
			[]string{"ADDED ns/a@4", "ADDED ns/c@3", "BOOKMARK @5+end", "ADDED ns/d@6"}},
		{"streaming list without bookmarks", metav1.ListOptions{SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ResourceVersion: "3"},
			[]string{"ADDED ns/a@4", "ADDED ns/c@3", "ADDED ns/d@6"}},
		{"selector sees leave and enter", metav1.ListOptions{ResourceVersion: "1", LabelSelector: "app=x"},
			[]string{"ADDED ns/b@2", "ADDED ns/c@3", "DELETED ns/a@4", "DELETED ns/b@5"}},
		{"field selector", metav1.ListOptions{ResourceVersion: "0", FieldSelector: "metadata.name=d"},
			[]string{"ADDED ns/d@6"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, lw := seeded(t, Options{})
				w := openWatch(t, lw, tc.opts)
				mustCreate(t, srv, newPod("ns", "d", nil))
				got, closed := drain(w)
				if closed {
					t.Errorf("watch closed")
				}
				equalStrings(t, "events", got, tc.want)
			})
		})
	}
}

func TestWatchExpiredIsAnErrorEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		if err := srv.Compact("4"); err != nil {
			t.Fatal(err)
		}
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "3"})
		got, closed := drain(w)
		equalStrings(t, "events", got, []string{"ERROR 410 Expired: too old resource version: 3 (4)"})
		if !closed {
			t.Errorf("error watch not closed")
		}
		w = openWatch(t, lw, metav1.ListOptions{ResourceVersion: "4"})
		if got, _ := drain(w); len(got) != 1 || got[0] != "DELETED ns/b@5" {
			t.Errorf("watch from the compaction point: %q", got)
		}
	})
}

func TestWatchHistoryWindowCompacts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{HistorySize: 2})
		if got := srv.CompactedResourceVersion(); got != "3" {
			t.Errorf("compacted = %s; want 3 (window keeps RVs 4 and 5)", got)
		}
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "2"})
		got, _ := drain(w)
		equalStrings(t, "events", got, []string{"ERROR 410 Expired: too old resource version: 2 (3)"})
	})
}

func TestStreamingWatchWaitsForFutureResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		opts := metav1.ListOptions{ResourceVersion: "7", SendInitialEvents: new(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
		w := openWatch(t, lw, opts)
		got, _ := drain(w)
		equalStrings(t, "too large", got, []string{"ERROR 504 Timeout: Timeout: Too large resource version: 7, current: 5"})
		go func() {
			time.Sleep(time.Second)
			mustCreate(t, srv, newPod("ns", "d", nil))
			mustCreate(t, srv, newPod("ns", "e", nil))
		}()
		w = openWatch(t, lw, opts)
		got, _ = drain(w)
		equalStrings(t, "reached", got, []string{"ADDED ns/a@4", "ADDED ns/c@3", "ADDED ns/d@6", "ADDED ns/e@7", "BOOKMARK @7+end"})
	})
}

func TestWatchFromFutureResourceVersionSkipsEarlierEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "6"})
		mustCreate(t, srv, newPod("ns", "d", nil))
		mustCreate(t, srv, newPod("ns", "e", nil))
		got, _ := drain(w)
		equalStrings(t, "events", got, []string{"ADDED ns/e@7"})
	})
}

func TestWatchBookmarksAndTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{BookmarkInterval: 10 * time.Second})
		timeout := int64(25)
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5", AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
		var got []string
		for range 3 {
			time.Sleep(10 * time.Second)
			evs, closed := drain(w)
			got = append(got, evs...)
			if closed {
				got = append(got, "CLOSED")
			}
			mustCreate(t, srv, newPod("ns", "n"+srv.ResourceVersion(), nil))
		}
		// n6@7 was never read before the 25s timeout: it goes with the watch.
		equalStrings(t, "events", got, []string{"BOOKMARK @5", "ADDED ns/n5@6", "BOOKMARK @6", "CLOSED"})
	})
}

func TestWatchStopAndContextEndTheWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, lw := seeded(t, Options{})
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5"})
		w.Stop()
		w.Stop()
		if _, closed := drain(w); !closed {
			t.Errorf("Stop did not close the result channel")
		}
		ctx, cancel := contextWithCancel(t)
		w2, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "5"})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, closed := drain(w2); !closed {
			t.Errorf("cancelling the context did not close the watch")
		}
	})
}

func TestWatchOptionValidation(t *testing.T) {
	_, lw := seeded(t, Options{})
	for name, opts := range map[string]metav1.ListOptions{
		"match without sendInitialEvents": {ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
		"sendInitialEvents with exact":    {SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchExact, ResourceVersion: "1"},
		"sendInitialEvents without match": {SendInitialEvents: new(true)},
	} {
		if _, err := lw.WatchWithContext(t.Context(), opts); !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v; want Invalid", name, err)
		}
	}
	_, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "abc"})
	if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code != 500 {
		t.Errorf("bad RV: %v; want the bare 500 kube-apiserver sends", err)
	}
}
