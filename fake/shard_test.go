package fake

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/utils/ptr"
)

// halfSelector is a shard selector on metadata.uid that selects the pods
// whose hash is below the median of pods' hashes (so neither half is
// empty), and the selected pods' names.
func halfSelector(pods []*corev1.Pod) (string, []string) {
	hashes := make([]string, len(pods))
	for i, p := range pods {
		hashes[i] = "0x" + sharding.HashField(string(p.UID))
	}
	sorted := slices.Clone(hashes)
	slices.Sort(sorted)
	cut := sorted[len(sorted)/2]
	var in []string
	for i, h := range hashes {
		if h < cut {
			in = append(in, pods[i].Name)
		}
	}
	sel := fmt.Sprintf("shardRange(object.metadata.uid, '0x0000000000000000', '%s')", cut)
	return sel, in
}

func podNames(list *corev1.PodList) []string {
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	return out
}

// TestShardSelectors: with ShardSelectorsApplied, lists (pages included),
// watches and streaming lists carry only the selected objects and lists
// echo the selector in ShardInfo; ShardSelectorsUnechoed filters without
// saying so; ShardSelectorsIgnored (the default) serves everything. A bad
// selector is the server's 500, unless ignored.
func TestShardSelectors(t *testing.T) {
	for name, mode := range map[string]ShardSelectorMode{"ignored": ShardSelectorsIgnored, "applied": ShardSelectorsApplied, "unechoed": ShardSelectorsUnechoed} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newTestServer(t, Options{ShardSelectors: mode})
				var pods []*corev1.Pod
				for i := range 12 {
					pods = append(pods, mustCreate(t, srv, newPod("ns", fmt.Sprintf("p%02d", i), nil)).(*corev1.Pod))
				}
				sel, in := halfSelector(pods)
				var all []string
				for _, p := range pods {
					all = append(all, p.Name)
				}
				want, echo := in, sel
				switch mode {
				case ShardSelectorsIgnored:
					want, echo = all, ""
				case ShardSelectorsUnechoed:
					echo = ""
				}
				lw := srv.ListerWatcher(LWOptions{Resource: podsGVR, Namespace: "ns"})
				obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ShardSelector: sel})
				if err != nil {
					t.Fatal(err)
				}
				list := obj.(*corev1.PodList)
				equalStrings(t, "list", podNames(list), want)
				if got := shardInfo(list); got != echo {
					t.Errorf("ShardInfo %q, want %q", got, echo)
				}

				// Pages: each keeps the selector and echoes it.
				var paged []string
				opts := metav1.ListOptions{ShardSelector: sel, Limit: 2}
				for {
					obj, err := lw.ListWithContext(t.Context(), opts)
					if err != nil {
						t.Fatal(err)
					}
					page := obj.(*corev1.PodList)
					if got := shardInfo(page); got != echo {
						t.Errorf("page ShardInfo %q, want %q", got, echo)
					}
					paged = append(paged, podNames(page)...)
					if opts.Continue = page.Continue; opts.Continue == "" {
						break
					}
				}
				equalStrings(t, "pages", paged, want)

				// A watch from the list's RV: only selected objects' events.
				w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{ShardSelector: sel, ResourceVersion: list.ResourceVersion})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pods {
					mustUpdate(t, srv, newPod("ns", p.Name, map[string]string{"touched": "yes"}))
				}
				evs, _ := drain(w)
				w.Stop()
				var touched []string
				for _, ev := range evs {
					touched = append(touched, strings.Split(strings.TrimPrefix(ev, "MODIFIED ns/"), "@")[0])
				}
				equalStrings(t, "watched", touched, want)

				// A streaming list: only selected objects, then the bookmark.
				w, err = lw.WatchWithContext(t.Context(), metav1.ListOptions{ShardSelector: sel, SendInitialEvents: ptr.To(true),
					ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
				if err != nil {
					t.Fatal(err)
				}
				evs, _ = drain(w)
				w.Stop()
				if n := len(evs); n != len(want)+1 || !strings.HasSuffix(evs[n-1], "+end") {
					t.Errorf("streaming list: %q, want %d ADDED and the end bookmark", evs, len(want))
				}

				_, err = lw.ListWithContext(t.Context(), metav1.ListOptions{ShardSelector: "shardRange(object.metadata.name, '0x0000000000000000', '0x10000000000000000')"})
				switch {
				case mode == ShardSelectorsIgnored && err != nil:
					t.Errorf("a server without the gate refused a selector it ignores: %v", err)
				case mode != ShardSelectorsIgnored && (apierrors.ReasonForError(err) != "" || status(err) != 500 ||
					!strings.HasPrefix(err.Error(), "invalid shard selector: unsupported field path")):
					t.Errorf("bad selector: %v, want a 500 invalid shard selector", err)
				}
			})
		})
	}
}

// TestShardSelectorsUnstructured: an unstructured list echoes the selector
// in metadata.shardInfo.selector.
func TestShardSelectorsUnstructured(t *testing.T) {
	res := Resource{GVR: ConfigMaps().GVR, Kind: "ConfigMap", Namespaced: true, Unstructured: true}
	srv := newTestServer(t, Options{Resources: []Resource{res}, ShardSelectors: ShardSelectorsApplied})
	const sel = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
	obj, err := srv.ListerWatcher(LWOptions{Resource: res.GVR}).ListWithContext(t.Context(), metav1.ListOptions{ShardSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(obj.(*unstructured.UnstructuredList).Object, "metadata", "shardInfo", "selector")
	if got != sel {
		t.Fatalf("shardInfo %q, want %q", got, sel)
	}
}

func TestShardSelectorModeChecked(t *testing.T) {
	if _, err := NewServer(Options{ShardSelectors: ShardSelectorsUnechoed + 1}); err == nil {
		t.Fatal("an unknown ShardSelectors mode was accepted")
	}
}

func shardInfo(l *corev1.PodList) string {
	if l.ShardInfo == nil {
		return ""
	}
	return l.ShardInfo.Selector
}

// status is the HTTP code of an API error, 0 for another error.
func status(err error) int32 {
	if se, ok := err.(apierrors.APIStatus); ok {
		return se.Status().Code
	}
	return 0
}

// TestUIDSeed: with a seed, UIDs are version-4 UUIDs, reproducible, and
// spread over the hash space (every eighth of it holds some of 64).
func TestUIDSeed(t *testing.T) {
	uids := func(seed uint64) []string {
		srv := newTestServer(t, Options{UIDSeed: seed})
		var out []string
		for i := range 64 {
			out = append(out, string(mustCreate(t, srv, newPod("ns", fmt.Sprintf("p%02d", i), nil)).(*corev1.Pod).UID))
		}
		return out
	}
	a, b := uids(7), uids(7)
	equalStrings(t, "same seed", a, b)
	eighths := map[int]bool{}
	for _, u := range a {
		if len(u) != 36 || u[14] != '4' || !strings.ContainsRune("89ab", rune(u[19])) {
			t.Fatalf("uid %q is not a version-4 UUID", u)
		}
		eighths[strings.IndexByte("0123456789abcdef", sharding.HashField(u)[0])/2] = true
	}
	if len(eighths) != 8 {
		t.Fatalf("64 uids fall in %d eighths of the hash space", len(eighths))
	}
	if slices.Equal(a, uids(8)) {
		t.Fatal("another seed gave the same uids")
	}
}
