package fake

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func callStrings(srv *Server) []string {
	var out []string
	for _, c := range srv.Calls() {
		out = append(out, c.String())
	}
	return out
}

func TestCallsRecordRequestsAndOutcomes(t *testing.T) {
	srv, lw := seeded(t, Options{})
	ctx := t.Context()
	mustNoErr(t, srv.FailNext(Failure{Verbs: VerbList, Times: 1, Kind: ConnectionRefused}))
	_, _ = lw.ListWithContext(ctx, metav1.ListOptions{})
	_, _ = lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1, LabelSelector: "app=x"})
	mustNoErr(t, srv.Compact("5"))
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true})
	mustNoErr(t, err)
	w.Stop()
	equalStrings(t, "calls", callStrings(srv), []string{
		"list pods -> connection refused",
		"list pods labels=app=x limit=1 -> ok rv=5",
		"watch pods rv=1 bookmarks -> in-stream 410 Expired",
	})
	srv.ResetCalls()
	if len(srv.Calls()) != 0 {
		t.Errorf("ResetCalls kept %v", srv.Calls())
	}
}

// TestClientGoReflectorRequestSequence pins what client-go v0.37's reflector
// asks for: a streaming list first, a plain re-watch from its RV after the
// watch is dropped, and after a 410 on that re-watch a new streaming list
// from the same RV (which, like kube-apiserver, the fake serves although the
// RV was compacted: initial events come from the current state).
func TestClientGoReflectorRequestSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, _ := seeded(t, Options{})
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		r := cache.NewReflectorWithOptions(srv.ListerWatcher(LWOptions{Resource: podsGVR}), &corev1.Pod{}, store, cache.ReflectorOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		time.Sleep(time.Second)
		srv.CloseWatches(GVR{})
		time.Sleep(5 * time.Second)
		// The reflector must miss d and e, so that its re-watch from 5 is
		// too old: hold them back, compact past them and drop the watch.
		srv.Stall(GVR{})
		mustCreate(t, srv, newPod("ns", "d", nil))
		mustCreate(t, srv, newPod("ns", "e", nil))
		mustNoErr(t, srv.Compact(srv.ResourceVersion()))
		srv.CloseWatches(GVR{})
		srv.Unstall(GVR{})
		time.Sleep(5 * time.Second)
		cancel()
		<-done
		equalStrings(t, "calls", callStrings(srv), []string{
			"watch pods match=NotOlderThan sendInitialEvents=true bookmarks -> ok",
			"watch pods rv=5 bookmarks -> ok",
			"watch pods rv=5 bookmarks -> in-stream 410 Expired",
			"watch pods rv=5 match=NotOlderThan sendInitialEvents=true bookmarks -> ok",
		})
		mustNoErr(t, Converged(srv, LWOptions{Resource: podsGVR}, store.List()))
	})
}
