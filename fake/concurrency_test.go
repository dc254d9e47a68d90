package fake

import (
	"fmt"
	"maps"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestConcurrentWritersAndWatchers runs writers and watchers in parallel
// (real goroutines, under -race): every watch must see strictly increasing
// RVs (they open on an empty server, so every event is live) and, replayed,
// end at the server's state for its selector.
func TestConcurrentWritersAndWatchers(t *testing.T) {
	srv := newTestServer(t, Options{WatchBufferSize: 10000})
	ctx := t.Context()
	const writers, perWriter = 4, 150
	lw := srv.ListerWatcher(LWOptions{Resource: podsGVR})
	selectors := []string{"", "w=1", "w!=2"}
	results := make([]chan replayResult, len(selectors))
	for i, sel := range selectors {
		w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: sel})
		mustNoErr(t, err)
		results[i] = make(chan replayResult, 1)
		go func() { results[i] <- replayUntilSentinel(w) }()
	}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			ns := fmt.Sprint("w", i)
			for j := range perWriter {
				name := fmt.Sprint("p", j%10)
				labels := map[string]string{"w": fmt.Sprint(j % 3)}
				if _, err := srv.Create(t.Context(), newPod(ns, name, labels)); err != nil {
					if _, err := srv.Update(t.Context(), newPod(ns, name, labels)); err != nil {
						t.Error(err)
					}
				}
				if j%7 == 0 {
					_, _ = srv.Delete(t.Context(), newPod(ns, name, nil))
				}
			}
		})
	}
	wg.Wait()
	mustCreate(t, srv, newPod("sentinel", "end", map[string]string{"w": "1"}))
	for i, sel := range selectors {
		r := <-results[i]
		if r.err != nil {
			t.Fatalf("selector %q: %v", sel, r.err)
		}
		list, err := lw.ListWithContext(ctx, metav1.ListOptions{LabelSelector: sel})
		mustNoErr(t, err)
		items, _ := meta.ExtractList(list)
		if err := Converged(srv, LWOptions{Resource: podsGVR}, items); sel == "" && err != nil {
			t.Errorf("list disagrees with the server: %v", err)
		}
		want := map[string]string{}
		for _, it := range items {
			m, _ := meta.Accessor(it)
			want[key(m.GetNamespace(), m.GetName())] = m.GetResourceVersion()
		}
		if !maps.Equal(r.state, want) {
			t.Errorf("selector %q: watch replay\n%v\nlist\n%v", sel, r.state, want)
		}
	}
}

type replayResult struct {
	state map[string]string
	err   error
}

// replayUntilSentinel applies a watch's events to a key → RV map until the
// sentinel object arrives, then stops the watch.
func replayUntilSentinel(w watch.Interface) (res replayResult) {
	defer w.Stop()
	res.state = map[string]string{}
	var last uint64
	for ev := range w.ResultChan() {
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			res.err = err
			return res
		}
		rv, _ := parseRV(m.GetResourceVersion())
		if rv <= last {
			res.err = fmt.Errorf("RV went from %d to %d (%s)", last, rv, ev.Type)
			return res
		}
		last = rv
		k := key(m.GetNamespace(), m.GetName())
		if ev.Type == watch.Deleted {
			delete(res.state, k)
		} else {
			res.state[k] = m.GetResourceVersion()
		}
		if k == "sentinel/end" {
			return res
		}
	}
	res.err = fmt.Errorf("watch closed before the sentinel")
	return res
}
