package reflector

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// comparedScript is a server conversation on which listwatch and client-go
// must make the same requests: a paged first list, watch events, a clean
// close, a 410 in the stream and the relist after it.
func comparedScript(lw *scriptedLW) (drive func()) {
	w1, w2, w3 := newFakeWatch(), newFakeWatch(), newFakeWatch()
	lw.list(podList("10", "c1", "a"), nil)
	lw.list(podList("10", "", "b"), nil)
	lw.watch(w1, nil)
	lw.watch(w2, nil)
	lw.list(podList("20", "", "a", "c"), nil)
	lw.watch(w3, nil)
	return func() {
		time.Sleep(5 * time.Second)
		w1.Add(pod("c", "11"))
		w1.Action(watch.Bookmark, bookmark("12", false))
		time.Sleep(5 * time.Second)
		w1.Stop() // clean close: re-watch from the bookmark's RV
		time.Sleep(5 * time.Second)
		w2.Modify(pod("a", "13"))
		w2.Error(statusObject("410")) // relist from the last RV, paged: the server paged RV="0"
		time.Sleep(2 * time.Minute)
		w3.Delete(pod("c", "21"))
		time.Sleep(5 * time.Second)
	}
}

// TestSameRequestsAsClientGo runs the script against this package's
// Reflector and client-go's cache.Reflector (streaming lists off for both)
// and compares the request sequences and the final stores.
func TestSameRequestsAsClientGo(t *testing.T) {
	var ours, theirs []string
	var ourStore, theirStore string
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		drive := comparedScript(lw)
		r := newTestReflector(t, lw, st, Config[*corev1.Pod]{WatchList: WatchListOff})
		stop := runReflector(t, r)
		drive()
		stop()
		ours, ourStore = stripTimeouts(lw.history()), st.contents()
	})
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t)
		drive := comparedScript(lw)
		st := cache.NewStore(cache.MetaNamespaceKeyFunc)
		r := cache.NewReflectorWithOptions(noStreamingLW{lw}, &corev1.Pod{}, st, cache.ReflectorOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		drive()
		cancel()
		<-done
		theirs, theirStore = stripTimeouts(lw.history()), cacheContents(st)
	})
	want := []string{
		`list rv="0" limit=500`,
		`list continue=c1 limit=500`,
		`watch rv="10" bookmarks`,
		`watch rv="12" bookmarks`,
		`list rv="13" limit=500`,
		`watch rv="20" bookmarks`,
	}
	if d := diffLines(ours, want); d != "" {
		t.Errorf("listwatch requests (got | want):\n%s", d)
	}
	if d := diffLines(theirs, want); d != "" {
		t.Errorf("client-go requests (got | want):\n%s", d)
	}
	if ourStore != "ns/a@20" || theirStore != ourStore {
		t.Errorf("stores: listwatch %q, client-go %q, want %q", ourStore, theirStore, "ns/a@20")
	}
}

func stripTimeouts(calls []string) []string {
	for i, c := range calls {
		calls[i] = timeoutRE.ReplaceAllString(c, "")
	}
	return calls
}

func cacheContents(st cache.Store) string {
	m := newMemStore[*corev1.Pod]()
	for _, o := range st.List() {
		_ = m.Add(o.(*corev1.Pod))
	}
	return m.contents()
}
