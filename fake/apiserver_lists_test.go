package fake

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestContinueTokenStartKeepsLeadingSlash: like kube-apiserver's, a token's
// start is the key relative to the list's prefix with a leading "/"; one
// without the slash is accepted too, a path traversal is not.
func TestContinueTokenStartKeepsLeadingSlash(t *testing.T) {
	srv := newTestServer(t, Options{})
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, srv, newPod("ns", n, nil))
	}
	ctx := t.Context()
	start := func(namespace string) string {
		t.Helper()
		l, err := srv.ListerWatcher(LWOptions{Resource: podsGVR, Namespace: namespace}).ListWithContext(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		lm, _ := l.(metav1.ListInterface)
		raw, err := base64.RawURLEncoding.DecodeString(lm.GetContinue())
		if err != nil {
			t.Fatal(err)
		}
		var tok map[string]any
		if err := json.Unmarshal(raw, &tok); err != nil {
			t.Fatal(err)
		}
		return tok["start"].(string)
	}
	if got := start("ns"); got != "/a\x00" {
		t.Errorf("namespaced start %q; want \"/a\\x00\"", got)
	}
	if got := start(""); got != "/ns/a\x00" {
		t.Errorf("cluster-wide start %q; want \"/ns/a\\x00\"", got)
	}
	lw := srv.ListerWatcher(LWOptions{Resource: podsGVR, Namespace: "ns"})
	for tok, want := range map[string]string{
		`{"v":"meta.k8s.io/v1","rv":3,"start":"/b"}`: "rv=3 [ns/b@2 ns/c@3]",
		`{"v":"meta.k8s.io/v1","rv":3,"start":"b"}`:  "rv=3 [ns/b@2 ns/c@3]",
	} {
		l, err := lw.ListWithContext(ctx, metav1.ListOptions{Continue: encodeContinueRaw(tok)})
		if err != nil {
			t.Fatalf("%s: %v", tok, err)
		}
		if got := listKeys(t, l); got != want {
			t.Errorf("%s: %s; want %s", tok, got, want)
		}
	}
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{Continue: encodeContinueRaw(`{"v":"meta.k8s.io/v1","rv":3,"start":"/../x"}`)}); !apierrors.IsBadRequest(err) {
		t.Errorf("traversal start: %v; want BadRequest", err)
	}
}

// TestPreTimeoutBookmarks: a watch with timeoutSeconds that allowed
// bookmarks gets one per second from 2 s before its deadline, besides the
// BookmarkInterval ones; a watch of 2 s or less gets none.
func TestPreTimeoutBookmarks(t *testing.T) {
	cases := []struct {
		name     string
		interval time.Duration
		timeout  int64
		want     []string // by second, "|" marks each second boundary
	}{
		{"3s", time.Minute, 3, []string{"|", "BOOKMARK @5", "|", "BOOKMARK @5", "|", "CLOSED"}},
		{"2s: none", time.Minute, 2, []string{"|", "|", "CLOSED"}},
		{"5s with 1.5s interval", 1500 * time.Millisecond, 5,
			[]string{"|", "|", "BOOKMARK @5", "|", "BOOKMARK @5", "|", "BOOKMARK @5", "|", "CLOSED"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, lw := seeded(t, Options{BookmarkInterval: tc.interval})
				w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5", AllowWatchBookmarks: true, TimeoutSeconds: &tc.timeout})
				var got []string
				for range tc.timeout {
					time.Sleep(time.Second)
					evs, closed := drain(w)
					got = append(append(got, "|"), evs...)
					if closed {
						got = append(got, "CLOSED")
					}
				}
				equalStrings(t, "events", got, tc.want)
			})
		})
	}
}
