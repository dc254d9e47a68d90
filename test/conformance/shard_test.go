package conformance

import (
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/utils/ptr"
)

// shardSpecs: KEP-5866 shard selectors, with the ShardedListAndWatch gate
// on (the shared apiserver's flags; fake.ShardSelectorsApplied in
// FakeOptions): lists and pages carry the selected objects and echo the
// selector in ShardInfo, watches and streaming lists carry only their
// events, and a selector the server's parser refuses is a 500.
func shardSpecs(v variant, e *env) {
	Describe("shard selectors", func() {
		var (
			cms  []*corev1.ConfigMap
			sel  string   // selects the objects hashed below the median
			in   []string // those objects, "name@rv" in name order
			echo string   // the selector as the server renders it
		)

		BeforeEach(func(ctx SpecContext) {
			cms = nil
			for i := range 8 {
				cms = append(cms, e.create(ctx, fmt.Sprintf("s%d", i), nil))
			}
			hashes := make([]string, len(cms))
			for i, cm := range cms {
				hashes[i] = "0x" + sharding.HashField(string(cm.UID))
			}
			sorted := slices.Clone(hashes)
			slices.Sort(sorted)
			req := sharding.ShardRangeRequirement{Key: "object.metadata.uid", Start: "0x0000000000000000", End: sorted[len(sorted)/2]}
			// The client's spelling, which the server renders its own way.
			sel = fmt.Sprintf(`( shardRange(object.metadata.uid, "%s", "%s") )`, req.Start, req.End)
			echo = sharding.NewSelector(req).String()
			in = nil
			for i, cm := range cms {
				if hashes[i] < req.End {
					in = append(in, at(cm))
				}
			}
		})

		v.it("filter a list and echo the selector in ShardInfo", func(ctx SpecContext) {
			l := e.list(ctx, metav1.ListOptions{ShardSelector: sel})
			Expect(items(l)).To(Equal(in))
			Expect(l.ShardInfo).To(Equal(&metav1.ShardInfo{Selector: echo}))
			Expect(e.list(ctx, metav1.ListOptions{}).ShardInfo).To(BeNil())
		})

		v.it("keep the selector on every page of an exact list, counting the whole resource as remaining", func(ctx SpecContext) {
			last := cms[len(cms)-1].ResourceVersion
			var got []string
			opts := metav1.ListOptions{ShardSelector: sel, Limit: 2, ResourceVersion: last, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
			for {
				p := e.list(ctx, opts)
				Expect(p.ShardInfo).To(Equal(&metav1.ShardInfo{Selector: echo}))
				Expect(p.ResourceVersion).To(Equal(last))
				if got == nil { // as without a shard selector: every remaining object counts
					Expect(p.RemainingItemCount).To(Equal(ptr.To(int64(len(cms) - 2))))
				}
				got = append(got, items(p)...)
				if p.Continue == "" {
					break
				}
				opts = metav1.ListOptions{ShardSelector: sel, Limit: 2, Continue: p.Continue}
			}
			Expect(got).To(Equal(in))
		})

		v.it("deliver only the selected objects' events to a watch", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{ShardSelector: sel, ResourceVersion: cms[len(cms)-1].ResourceVersion})
			var (
				want  []string
				first *corev1.ConfigMap // the first selected object, updated
			)
			for _, cm := range cms {
				out := e.update(ctx, cm, map[string]string{"app": "x"}, nil)
				if slices.Contains(in, at(cm)) {
					want = append(want, "MODIFIED "+at(out)+" app=x")
					if first == nil {
						first = out
					}
				}
			}
			sentinel := e.update(ctx, first, map[string]string{"app": "y"}, nil)
			want = append(want, "MODIFIED "+at(sentinel)+" app=y")
			Expect(nextDescribed(w, len(want))).To(Equal(want)) // nothing of the others before the sentinel
		})

		v.it("stream only the selected objects in a streaming list", func(ctx SpecContext) {
			w := e.watch(ctx, metav1.ListOptions{ShardSelector: sel, SendInitialEvents: ptr.To(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			var got []string
			for _, ev := range next(w, len(in)) {
				got = append(got, describe(ev))
			}
			want := make([]string, len(in))
			for i, s := range in {
				want[i] = "ADDED " + s
			}
			Expect(got).To(ConsistOf(want))
			Expect(describe(next(w, 1)[0])).To(HavePrefix("BOOKMARK"))
		})

		v.it("refuse a selector its parser refuses with a 500", func(ctx SpecContext) {
			_, err := e.c.ListConfigMaps(ctx, e.ns, metav1.ListOptions{ShardSelector: "shardRange(object.metadata.name, '0x0000000000000000', '0x10000000000000000')"})
			expectStatus(err, metav1.Status{Code: 500, Message: `invalid shard selector: unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace`})
		})
	})
}
