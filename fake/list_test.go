package fake

import (
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// history: a@1 b@2 c@3, a relabelled @4, b deleted @5.
func seeded(t *testing.T, opts Options) (*Server, *ListerWatcher) {
	t.Helper()
	srv := newTestServer(t, opts)
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, srv, newPod("ns", n, map[string]string{"app": "x"}))
	}
	relabel(t, srv, "ns", "a", map[string]string{"app": "y"})
	mustDelete(t, srv, newPod("ns", "b", nil))
	return srv, srv.ListerWatcher(LWOptions{Resource: podsGVR})
}

func TestListResourceVersionSemantics(t *testing.T) {
	_, lw := seeded(t, Options{})
	cases := []struct {
		name string
		opts metav1.ListOptions
		want string
	}{
		{"most recent", metav1.ListOptions{}, "rv=5 [ns/a@4 ns/c@3]"},
		{"any", metav1.ListOptions{ResourceVersion: "0"}, "rv=5 [ns/a@4 ns/c@3]"},
		{"any ignores limit", metav1.ListOptions{ResourceVersion: "0", Limit: 1}, "rv=5 [ns/a@4 ns/c@3]"},
		{"not older than", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, "rv=5 [ns/a@4 ns/c@3]"},
		{"legacy not older than", metav1.ListOptions{ResourceVersion: "2"}, "rv=5 [ns/a@4 ns/c@3]"},
		{"exact", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, "rv=2 [ns/a@1 ns/b@2]"},
		{"exact before delete", metav1.ListOptions{ResourceVersion: "4", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, "rv=4 [ns/a@4 ns/b@2 ns/c@3]"},
		{"legacy exact with limit", metav1.ListOptions{ResourceVersion: "3", Limit: 10}, "rv=3 [ns/a@1 ns/b@2 ns/c@3]"},
		{"label selector", metav1.ListOptions{LabelSelector: "app=x"}, "rv=5 [ns/c@3]"},
		{"field selector", metav1.ListOptions{FieldSelector: "metadata.name=a"}, "rv=5 [ns/a@4]"},
		{"pod field selector", metav1.ListOptions{FieldSelector: "spec.nodeName="}, "rv=5 [ns/a@4 ns/c@3]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			list, err := lw.ListWithContext(t.Context(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := list.(*corev1.PodList); !ok {
				t.Fatalf("list is %T; want *corev1.PodList", list)
			}
			if got := listKeys(t, list); got != tc.want {
				t.Errorf("got %s; want %s", got, tc.want)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	srv, lw := seeded(t, Options{})
	if err := srv.Compact("3"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		opts  metav1.ListOptions
		check func(error) bool
		msg   string
	}{
		{"exact compacted", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			apierrors.IsResourceExpired, msgListExpired},
		{"match without rv", metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact}, apierrors.IsInvalid, ""},
		{"exact zero", metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, apierrors.IsInvalid, ""},
		{"sendInitialEvents on list", metav1.ListOptions{SendInitialEvents: new(true)}, apierrors.IsInvalid, ""},
		{"bad rv", metav1.ListOptions{ResourceVersion: "x"}, apierrors.IsBadRequest, ""},
		{"bad label selector", metav1.ListOptions{LabelSelector: "a=(b"}, apierrors.IsBadRequest, ""},
		{"unsupported field", metav1.ListOptions{FieldSelector: "spec.foo=x"}, apierrors.IsBadRequest, "field label not supported: spec.foo"},
		{"bad continue", metav1.ListOptions{Continue: "!!"}, apierrors.IsBadRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lw.ListWithContext(t.Context(), tc.opts)
			if !tc.check(err) {
				t.Fatalf("err = %v", err)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("message %q; want %q", err.Error(), tc.msg)
			}
		})
	}
	cms := srv.ListerWatcher(LWOptions{Resource: ConfigMaps().GVR})
	if _, err := cms.ListWithContext(t.Context(), metav1.ListOptions{FieldSelector: "data.x=y"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unsupported configmap field: %v; want BadRequest", err)
	}
	missing := srv.ListerWatcher(LWOptions{Resource: GVR{Version: "v1", Resource: "nodes"}})
	if _, err := missing.ListWithContext(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unserved resource: %v; want NotFound", err)
	}
}

func TestListTooLargeResourceVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		start := time.Now()
		_, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
			t.Fatalf("err = %v; want 504 with ResourceVersionTooLarge", err)
		}
		if waited := time.Since(start); waited != DefaultTooLargeRVTimeout {
			t.Errorf("waited %v; want %v", waited, DefaultTooLargeRVTimeout)
		}
		// A list for an RV the server reaches while waiting succeeds.
		done := make(chan string)
		go func() {
			list, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "6", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			if err != nil {
				done <- err.Error()
				return
			}
			done <- listKeys(t, list)
		}()
		time.Sleep(time.Second)
		mustCreate(t, srv, newPod("ns", "d", nil))
		if got := <-done; got != "rv=6 [ns/a@4 ns/c@3 ns/d@6]" {
			t.Errorf("waiting list: %s", got)
		}
	})
}

func TestListPagination(t *testing.T) {
	srv := newTestServer(t, Options{})
	names := []string{"e", "a", "d", "b", "c"}
	for _, n := range names {
		mustCreate(t, srv, newPod("ns", n, map[string]string{"even": map[bool]string{true: "y", false: "n"}[n == "b" || n == "d"]}))
	}
	lw := srv.ListerWatcher(LWOptions{Resource: podsGVR, Namespace: "ns"})
	ctx := t.Context()
	var pages []string
	var remaining []int64
	opts := metav1.ListOptions{Limit: 2}
	for {
		list, err := lw.ListWithContext(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, listKeys(t, list))
		lm, _ := meta.ListAccessor(list)
		if rc := lm.GetRemainingItemCount(); rc != nil {
			remaining = append(remaining, *rc)
		}
		if lm.GetContinue() == "" {
			break
		}
		if len(pages) == 1 { // writes between pages do not show up
			mustDelete(t, srv, newPod("ns", "c", nil))
			mustCreate(t, srv, newPod("ns", "bb", nil))
		}
		opts.Continue = lm.GetContinue()
	}
	equalStrings(t, "pages", pages, []string{"rv=5 [ns/a@2 ns/b@4]", "rv=5 [ns/c@5 ns/d@3]", "rv=5 [ns/e@1]"})
	if len(remaining) != 2 || remaining[0] != 3 || remaining[1] != 1 {
		t.Errorf("remainingItemCount = %v; want [3 1]", remaining)
	}
	// With a selector the page is filled from matching items and no count.
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "even=y"})
	if err != nil {
		t.Fatal(err)
	}
	lm, _ := meta.ListAccessor(list)
	if got := listKeys(t, list); got != "rv=7 [ns/b@4]" || lm.GetRemainingItemCount() != nil || lm.GetContinue() == "" {
		t.Errorf("selector page: %s remaining=%v continue=%q", got, lm.GetRemainingItemCount(), lm.GetContinue())
	}
}

func TestListContinueExpired(t *testing.T) {
	srv := newTestServer(t, Options{})
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, srv, newPod("ns", n, nil))
	}
	lw := srv.ListerWatcher(LWOptions{Resource: podsGVR})
	ctx := t.Context()
	first, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, srv, newPod("ns", "ab", nil))
	if err := srv.Compact(srv.ResourceVersion()); err != nil {
		t.Fatal(err)
	}
	_, err = lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1, Continue: first.(*corev1.PodList).Continue})
	if !apierrors.IsResourceExpired(err) || err.Error() != msgContinueExpired {
		t.Fatalf("err = %v; want 410 %q", err, msgContinueExpired)
	}
	token := err.(*apierrors.StatusError).ErrStatus.ListMeta.Continue
	rest, err := lw.ListWithContext(ctx, metav1.ListOptions{Continue: token})
	if err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, rest); got != "rv=4 [ns/ab@4 ns/b@2 ns/c@3]" {
		t.Errorf("inconsistent continuation: %s", got)
	}
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{Continue: token, ResourceVersion: "3"}); !apierrors.IsBadRequest(err) {
		t.Errorf("continue with resourceVersion: %v; want BadRequest", err)
	}
}
