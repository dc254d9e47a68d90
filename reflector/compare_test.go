package reflector

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/internal/testing/objects"
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
		w1.Add(objects.Pod("ns", "c", objects.RV("11")))
		w1.Action(watch.Bookmark, bookmark("12", false))
		time.Sleep(5 * time.Second)
		w1.Stop() // clean close: re-watch from the bookmark's RV
		time.Sleep(5 * time.Second)
		w2.Modify(objects.Pod("ns", "a", objects.RV("13")))
		w2.Error(statusObject("410")) // relist from the last RV, paged: the server paged RV="0"
		time.Sleep(2 * time.Minute)
		w3.Delete(objects.Pod("ns", "c", objects.RV("21")))
		time.Sleep(5 * time.Second)
	}
}

// TestSameRequestsAsClientGo runs the script against this package's
// Reflector and client-go's cache.Reflector (streaming lists off for both)
// and compares the request sequences and the final stores.
func TestSameRequestsAsClientGo(t *testing.T) {
	compareWithClientGo(t, comparedScript, false, []string{
		`list rv="0" limit=500`,
		`list continue=c1 limit=500`,
		`watch rv="10" bookmarks`,
		`watch rv="12" bookmarks`,
		`list rv="13" limit=500`,
		`watch rv="20" bookmarks`,
	}, "ns/a@20")
}

// streamingScript: a streaming list, a change, a 410 in the stream, a 410
// when re-streaming from the last RV, and a stream from RV="".
func streamingScript(lw *scriptedLW) (drive func()) {
	w1, w3 := newFakeWatch(), newFakeWatch()
	lw.watch(w1, nil)
	lw.watch(nil, errorFor("410", 0))
	lw.watch(w3, nil)
	return func() {
		w1.Add(objects.Pod("ns", "a", objects.RV("5")))
		w1.Add(objects.Pod("ns", "b", objects.RV("6")))
		w1.Action(watch.Bookmark, bookmark("7", true))
		time.Sleep(5 * time.Second)
		w1.Modify(objects.Pod("ns", "a", objects.RV("8")))
		w1.Error(statusObject("410"))
		time.Sleep(2 * time.Minute)
		w3.Add(objects.Pod("ns", "a", objects.RV("9")))
		w3.Action(watch.Bookmark, bookmark("10", true))
		time.Sleep(5 * time.Second)
	}
}

// TestSameStreamingRequestsAsClientGo: the same comparison with streaming
// lists, which client-go v0.37 uses by default.
func TestSameStreamingRequestsAsClientGo(t *testing.T) {
	const stream = ` send-initial-events match=NotOlderThan bookmarks`
	compareWithClientGo(t, streamingScript, true, []string{
		`watch rv=""` + stream,
		`watch rv="8"` + stream,
		`watch rv=""` + stream,
	}, "ns/a@9")
}

// compareWithClientGo runs script against both reflectors, each in its own
// bubble, and checks both make the wanted requests and end with wantStore.
func compareWithClientGo(t *testing.T, script func(*scriptedLW) func(), streaming bool, want []string, wantStore string) {
	var ours, theirs []string
	var ourStore, theirStore string
	synctest.Test(t, func(t *testing.T) {
		lw, st := newScriptedLW(t), newMemStore[*corev1.Pod]()
		drive := script(lw)
		cfg := Config[*corev1.Pod]{WatchList: WatchListOff}
		if streaming {
			cfg.WatchList = WatchListAuto
		}
		stop := runReflector(t, newTestReflector(t, lw, st, cfg))
		drive()
		stop()
		ours, ourStore = stripTimeouts(lw.history()), st.contents()
	})
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t)
		drive := script(lw)
		var src cache.ListerWatcher = objects.NoWatchList(plainLW{lw})
		if streaming {
			src = plainLW{lw}
		}
		st := cache.NewStore(cache.MetaNamespaceKeyFunc)
		r := cache.NewReflectorWithOptions(src, &corev1.Pod{}, st, cache.ReflectorOptions{})
		ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
		done := make(chan struct{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		drive()
		cancel()
		<-done
		theirs, theirStore = stripTimeouts(lw.history()), cacheContents(st)
	})
	if d := diffLines(ours, want); d != "" {
		t.Errorf("listwatch requests (got | want):\n%s", d)
	}
	if d := diffLines(theirs, want); d != "" {
		t.Errorf("client-go requests (got | want):\n%s", d)
	}
	if ourStore != wantStore || theirStore != wantStore {
		t.Errorf("stores: listwatch %q, client-go %q, want %q", ourStore, theirStore, wantStore)
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
