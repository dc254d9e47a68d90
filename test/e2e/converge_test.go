package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// serverState lists ns's ConfigMaps with a quorum read (RV ""), page by
// page, and returns key -> resourceVersion.
func serverState(ctx context.Context, cs kubernetes.Interface, ns string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
		Expect(err).NotTo(HaveOccurred())
		for i := range list.Items {
			cm := &list.Items[i]
			out[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
		}
		if list.Continue == "" {
			return out
		}
		opts.Continue = list.Continue
	}
}

// stateDiff describes how got differs from want in a line, with a few
// example keys; "" when they are equal.
func stateDiff(want, got map[string]string) string {
	var missing, extra, stale []string
	for k, rv := range want {
		switch g, ok := got[k]; {
		case !ok:
			missing = append(missing, k)
		case g != rv:
			stale = append(stale, fmt.Sprintf("%s(rv %s, want %s)", k, g, rv))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra)+len(stale) == 0 {
		return ""
	}
	head := func(s []string) string {
		sort.Strings(s)
		if len(s) > 3 {
			s = append(s[:3:3], "...")
		}
		return strings.Join(s, " ")
	}
	return fmt.Sprintf("%d missing [%s], %d extra [%s], %d stale [%s]",
		len(missing), head(missing), len(extra), head(extra), len(stale), head(stale))
}

// awaitConverged waits until every side's cache equals the server's state of
// ns (keys and resource versions, from a quorum list), which must no longer
// be changing, and returns how long each side took from the call. It then
// checks once more against a fresh quorum list.
func awaitConverged(ctx context.Context, cs kubernetes.Interface, ns string, timeout time.Duration, sides ...side) map[side]time.Duration {
	GinkgoHelper()
	want := serverState(ctx, cs, ns)
	start := time.Now()
	took := map[side]time.Duration{}
	Eventually(ctx, func() string {
		var pending []string
		for _, s := range sides {
			if _, done := took[s]; done {
				continue
			}
			if d := stateDiff(want, s.state()); d != "" {
				pending = append(pending, s.lib()+": "+d)
				continue
			}
			took[s] = time.Since(start)
		}
		return strings.Join(pending, "; ")
	}).WithTimeout(timeout).WithPolling(50*time.Millisecond).Should(BeEmpty(),
		"every cache should equal the server's %d objects", len(want))
	fresh := serverState(ctx, cs, ns)
	Expect(stateDiff(want, fresh)).To(BeEmpty(), "the server changed while convergence was measured")
	for _, s := range sides {
		Expect(stateDiff(fresh, s.state())).To(BeEmpty(), "%s after convergence", s.lib())
		// What the handler was told adds up to the same objects.
		Eventually(s.events().viewDiff).WithArguments(fresh).WithTimeout(timeout).
			Should(BeEmpty(), "%s: the handler's view", s.lib())
	}
	return took
}
