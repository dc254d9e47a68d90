package fake

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func churnTrace(t *testing.T, seed uint64) string {
	srv := newTestServer(t, Options{})
	c, err := NewChurn(srv, ChurnOptions{Resource: podsGVR, Namespaces: []string{"a", "b"}, Seed: seed, MaxObjects: 5})
	mustNoErr(t, err)
	mustNoErr(t, c.Steps(t.Context(), 60))
	list, err := srv.ListerWatcher(LWOptions{Resource: podsGVR}).ListWithContext(t.Context(), metav1.ListOptions{})
	mustNoErr(t, err)
	var b strings.Builder
	for _, p := range list.(*corev1.PodList).Items {
		b.WriteString(p.Namespace + "/" + p.Name + "@" + p.ResourceVersion + "," + p.Labels["churn"] + " ")
	}
	return b.String()
}

func TestChurnIsDeterministicPerSeed(t *testing.T) {
	a, b, c := churnTrace(t, 1), churnTrace(t, 1), churnTrace(t, 2)
	if a != b {
		t.Errorf("same seed, different result:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("different seeds, same result: %s", a)
	}
	if n := strings.Count(a, " "); n == 0 || n > 5 {
		t.Errorf("%d live objects; want 1..5: %s", n, a)
	}
}

func TestConvergedReportsReadableDiff(t *testing.T) {
	srv, _ := seeded(t, Options{}) // a@4 c@3
	lw := LWOptions{Resource: podsGVR}
	good := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "4"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "3"}},
	}
	if err := Converged(srv, lw, good); err != nil {
		t.Errorf("converged store reported: %v", err)
	}
	bad := []any{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", ResourceVersion: "2"}},
		"junk",
	}
	err := Converged(srv, lw, bad)
	want := "fake: store has not converged to /v1, Resource=pods at RV 5 (2 server objects, 2 in store):\n" +
		"~ ns/a store@1 server@4\n" +
		"+ ns/b@2 (not on server)\n" +
		"- ns/c@3 (missing from store)\n" +
		"item 2 (string) has no object metadata"
	if err == nil || err.Error() != want {
		t.Errorf("diff:\n%v\nwant:\n%s", err, want)
	}
	if err := ConvergedKeys(srv, LWOptions{Resource: podsGVR, Namespace: "other"}, map[string]string{}); err != nil {
		t.Errorf("empty namespace: %v", err)
	}
}

func TestLWOptionsSelectorsApplyToCallsAndConverged(t *testing.T) {
	srv, _ := seeded(t, Options{}) // a@4 (app=y), c@3 (app=x)
	lwo := LWOptions{Resource: podsGVR, LabelSelector: "app=x"}
	list, err := srv.ListerWatcher(lwo).ListWithContext(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=c"})
	mustNoErr(t, err)
	if got := listKeys(t, list); got != "rv=5 [ns/c@3]" {
		t.Errorf("list %s", got)
	}
	if err := ConvergedKeys(srv, lwo, map[string]string{"ns/c": "3"}); err != nil {
		t.Errorf("ConvergedKeys with selector: %v", err)
	}
}

func TestChurnRunKeepsItsRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{})
		c, err := NewChurn(srv, ChurnOptions{Resource: podsGVR, Seed: 3, Rate: 20})
		mustNoErr(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second+time.Millisecond)
		defer cancel()
		mustNoErr(t, c.Run(ctx))
		if got := srv.Stats().Events; got != 40 {
			t.Errorf("%d writes in 2s at 20/s; want 40", got)
		}
	})
}

func TestNewChurnRejectsBadOptions(t *testing.T) {
	srv := newTestServer(t, Options{})
	if _, err := NewChurn(srv, ChurnOptions{Resource: GVR{Version: "v1", Resource: "nodes"}}); err == nil {
		t.Errorf("unserved resource accepted")
	}
	if _, err := NewChurn(srv, ChurnOptions{Resource: podsGVR, Rate: -1}); err == nil {
		t.Errorf("negative rate accepted")
	}
}
