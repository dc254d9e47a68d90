package fake

import (
	"testing"
	"testing/synctest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWatchCacheModes: what a watch from a compacted RV gets under each
// Options.WatchCache, and that lists are 410 under all of them.
func TestWatchCacheModes(t *testing.T) {
	cases := []struct {
		name    string
		opts    Options
		compact string
		want    []string
	}{
		{"follows compaction", Options{}, "3", []string{"ERROR 410 Expired: too old resource version: 2 (3)"}},
		{"own window", Options{WatchCache: WatchCacheOwnWindow}, "3",
			[]string{"ADDED ns/c@3", "MODIFIED ns/a@4", "DELETED ns/b@5"}},
		{"own window still bounded by HistorySize", Options{WatchCache: WatchCacheOwnWindow, HistorySize: 2}, "4",
			[]string{"ERROR 410 Expired: too old resource version: 2 (3)"}},
		{"disabled", Options{WatchCache: WatchCacheDisabled}, "3",
			[]string{"ERROR 410 Expired: The resourceVersion for the provided watch is too old."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, lw := seeded(t, tc.opts)
				if err := srv.Compact(tc.compact); err != nil {
					t.Fatal(err)
				}
				if got := srv.CompactedResourceVersion(); got != tc.compact {
					t.Errorf("CompactedResourceVersion %s; want %s", got, tc.compact)
				}
				_, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
				if !apierrors.IsResourceExpired(err) || errStatus(err).Message != msgListExpired {
					t.Errorf("exact list at a compacted RV: %v; want 410 %q", err, msgListExpired)
				}
				got, _ := drain(openWatch(t, lw, metav1.ListOptions{ResourceVersion: "2"}))
				equalStrings(t, "watch from RV 2", got, tc.want)
			})
		})
	}
	if _, err := NewServer(Options{WatchCache: WatchCacheDisabled + 1}); err == nil {
		t.Errorf("unknown WatchCache mode accepted")
	}
}
