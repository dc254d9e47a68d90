package fake

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// fidelityCase is one request, in terms of write indexes.
type fidelityCase struct {
	name  string
	watch bool
	opts  func(s *side) metav1.ListOptions
}

func fidelityCases() []fidelityCase {
	at := func(rv int, match metav1.ResourceVersionMatch) func(*side) metav1.ListOptions {
		return func(s *side) metav1.ListOptions {
			return metav1.ListOptions{ResourceVersion: s.rv(rv), ResourceVersionMatch: match}
		}
	}
	fixed := func(o metav1.ListOptions) func(*side) metav1.ListOptions {
		return func(*side) metav1.ListOptions { return o }
	}
	streaming := metav1.ListOptions{SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	return []fidelityCase{
		{"list most recent", false, fixed(metav1.ListOptions{})},
		{"list any", false, fixed(metav1.ListOptions{ResourceVersion: "0"})},
		{"list any with limit", false, fixed(metav1.ListOptions{ResourceVersion: "0", Limit: 1})},
		{"list not older than", false, at(1, metav1.ResourceVersionMatchNotOlderThan)},
		{"list exact", false, at(1, metav1.ResourceVersionMatchExact)},
		{"list exact before delete", false, at(3, metav1.ResourceVersionMatchExact)},
		{"list legacy exact with limit", false, func(s *side) metav1.ListOptions {
			return metav1.ListOptions{ResourceVersion: s.rv(3), Limit: 1}
		}},
		{"list pages", false, fixed(metav1.ListOptions{Limit: 1})},
		{"list label selector", false, fixed(metav1.ListOptions{LabelSelector: "app=x"})},
		{"list field selector", false, fixed(metav1.ListOptions{FieldSelector: "metadata.name=c"})},
		{"list unsupported field", false, fixed(metav1.ListOptions{FieldSelector: "spec.foo=x"})},
		{"list bad label selector", false, fixed(metav1.ListOptions{LabelSelector: "a=(b"})},
		{"list match without rv", false, fixed(metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact})},
		{"list exact zero", false, fixed(metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact})},
		{"list bad rv", false, fixed(metav1.ListOptions{ResourceVersion: "abc"})},
		{"list bad continue", false, fixed(metav1.ListOptions{Continue: "abc"})},
		// "Too large resource version" (504) matches too, but client-go's
		// REST client retries it ten times (3s wait + Retry-After 1s each):
		// 43s per call, too slow to keep here.
		{"watch from rv", true, at(0, "")},
		{"watch legacy most recent", true, fixed(metav1.ListOptions{})},
		{"watch legacy any", true, fixed(metav1.ListOptions{ResourceVersion: "0"})},
		{"watch selector leave and enter", true, func(s *side) metav1.ListOptions {
			return metav1.ListOptions{ResourceVersion: s.rv(0), LabelSelector: "app=x"}
		}},
		{"watch streaming", true, fixed(streaming)},
		{"watch streaming from rv", true, func(s *side) metav1.ListOptions {
			o := streaming
			o.ResourceVersion = s.rv(2)
			return o
		}},
		{"watch streaming without bookmarks", true, fixed(metav1.ListOptions{SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})},
		{"watch no initial events", true, fixed(metav1.ListOptions{SendInitialEvents: new(false), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})},
		{"watch match without sendInitialEvents", true, fixed(metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})},
		{"watch bad rv", true, fixed(metav1.ListOptions{ResourceVersion: "abc"})},
	}
}

// TestFidelityAgainstKubeAPIServer runs the same scripted writes, lists and
// watches against the fake and a real kube-apiserver v1.36 and requires the
// same answers (resource versions compared relative to the writes, numbers
// in messages masked). It is skipped under -short.
func TestFidelityAgainstKubeAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real kube-apiserver")
	}
	real, fk := realSide(t), fakeSide(t)
	real.seed(t)
	fk.seed(t)
	ctx := t.Context()
	for _, tc := range fidelityCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, s := range []*side{real, fk} {
				if tc.watch {
					got[s.name] = s.watch(ctx, tc.opts(s))
				} else {
					got[s.name] = s.list(ctx, tc.opts(s))
				}
			}
			if got[real.name] != got[fk.name] {
				t.Errorf("\nkube-apiserver: %s\nfake:           %s", got[real.name], got[fk.name])
			} else {
				t.Logf("both: %s", got[fk.name])
			}
		})
	}
}

// TestFidelityCompactionAgainstKubeAPIServer compares the 410s of exact
// lists and continue tokens after a compaction, including the inconsistent
// continue token the 410 carries and the list it continues. The real server
// runs without the watch cache, which would otherwise keep serving the
// compacted RVs from its own snapshots; its watches would then say "The
// resourceVersion for the provided watch is too old." where the fake (like
// the watch cache) says "too old resource version: N (M)", so watches are
// left out. Skipped under -short.
func TestFidelityCompactionAgainstKubeAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real kube-apiserver")
	}
	real := realSideWith(t, testapiserver.Options{DisableWatchCache: true, EtcdCompactionInterval: time.Second})
	fk := fakeSide(t)
	ctx := t.Context()
	got := map[string][]string{}
	for _, s := range []*side{real, fk} {
		for _, n := range []string{"a", "b", "c"} {
			cm, err := s.create(ctx, fidelityCM(n, "x"))
			mustNoErr(t, err)
			s.record(cm.ResourceVersion)
		}
		page, err := s.lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
		mustNoErr(t, err)
		token := page.(*corev1.ConfigMapList).Continue
		s.compacted(t, page.(*corev1.ConfigMapList).ResourceVersion)
		out := []string{s.list(ctx, metav1.ListOptions{ResourceVersion: s.rv(0), ResourceVersionMatch: metav1.ResourceVersionMatchExact})}
		_, err = s.lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1, Continue: token})
		out = append(out, s.describeErr(err))
		var se *apierrors.StatusError
		if errors.As(err, &se) && se.ErrStatus.Continue != "" {
			rest, err := s.lw.ListWithContext(ctx, metav1.ListOptions{Continue: se.ErrStatus.Continue})
			mustNoErr(t, err)
			items, _ := meta.ExtractList(rest)
			for _, it := range items {
				if m, _ := meta.Accessor(it); !strings.HasPrefix(m.GetName(), "filler") {
					out = append(out, s.describeObj(it))
				}
			}
		}
		got[s.name] = out
	}
	if strings.Join(got[real.name], "\n") != strings.Join(got[fk.name], "\n") {
		t.Errorf("\nkube-apiserver: %q\nfake:           %q", got[real.name], got[fk.name])
	} else {
		t.Logf("both: %q", got[fk.name])
	}
}
