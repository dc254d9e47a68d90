package fake

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// faultRound is one disturbance applied between churn bursts.
type faultRound func(t *testing.T, srv *Server, gvr GVR)

var clientGoFaults = []faultRound{
	func(t *testing.T, srv *Server, gvr GVR) { srv.CloseWatches(gvr) },
	func(t *testing.T, srv *Server, gvr GVR) {
		mustNoErr(t, srv.FailNext(Failure{Resource: gvr, Verbs: VerbWatch, Times: 2, Kind: TooManyRequests}))
		srv.CloseWatches(gvr)
	},
	func(t *testing.T, srv *Server, gvr GVR) {
		// Compaction plus a dropped watch forces a 410 on re-watch, then a relist.
		mustNoErr(t, srv.Compact(srv.ResourceVersion()))
		srv.CloseWatches(gvr)
	},
	func(t *testing.T, srv *Server, gvr GVR) {
		srv.Down()
		time.Sleep(3 * time.Second)
		srv.Up()
	},
	func(t *testing.T, srv *Server, gvr GVR) {
		mustNoErr(t, srv.FailNext(Failure{Resource: gvr, Times: 3, Kind: InternalError}))
		srv.CloseWatches(gvr)
	},
	func(t *testing.T, srv *Server, gvr GVR) {
		mustNoErr(t, srv.InjectWatchFault(WatchFault{Resource: gvr, Times: 1, CloseAfterEvents: 3}))
		srv.CloseWatches(gvr)
	},
	func(t *testing.T, srv *Server, gvr GVR) {
		srv.Stall(gvr)
		time.Sleep(2 * time.Second)
		srv.Unstall(gvr)
	},
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// churnUnderFaults churns the server in bursts with a fault between bursts,
// then waits (virtual time) until list() has converged.
func churnUnderFaults(t *testing.T, srv *Server, lw LWOptions, list func() []any) {
	ctx := t.Context()
	churn, err := NewChurn(srv, ChurnOptions{Resource: lw.Resource, Namespaces: []string{"ns1", "ns2"}, Seed: 42, MaxObjects: 30})
	mustNoErr(t, err)
	for i := range 3 * len(clientGoFaults) {
		mustNoErr(t, churn.Steps(ctx, 25))
		time.Sleep(500 * time.Millisecond)
		clientGoFaults[i%len(clientGoFaults)](t, srv, lw.Resource)
		mustNoErr(t, churn.Steps(ctx, 25))
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := Converged(srv, lw, list())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("did not converge: %v", err)
		}
		time.Sleep(time.Second)
	}
}

func TestClientGoReflectorConvergesUnderChurnAndFaults(t *testing.T) {
	for _, lwo := range []LWOptions{
		{Resource: podsGVR},
		{Resource: podsGVR, Namespace: "ns2"},
		{Resource: podsGVR, LabelSelector: "churn=a"}, // churn flips it: objects leave and enter
	} {
		t.Run("all"+lwo.Namespace+lwo.LabelSelector, func(t *testing.T) { reflectorConverges(t, lwo) })
	}
}

func reflectorConverges(t *testing.T, lwo LWOptions) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{HistorySize: 200, BookmarkInterval: 5 * time.Second})
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		r := cache.NewReflectorWithOptions(srv.ListerWatcher(lwo), &corev1.Pod{}, store, cache.ReflectorOptions{Name: "fake-test"})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		churnUnderFaults(t, srv, lwo, store.List)
		cancel()
		<-done
		if st := srv.Stats(); st.Faults == 0 || st.StreamingWatches == 0 {
			t.Errorf("stats %+v: want faults and streaming (watch-list) watches exercised", st)
		}
	})
}

func TestClientGoUnstructuredInformerConverges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
		srv := newTestServer(t, Options{Resources: []Resource{{GVR: gvr, Kind: "Widget", Namespaced: true, Unstructured: true}}})
		lwo := LWOptions{Resource: gvr, Namespace: "ns1"}
		example := &unstructured.Unstructured{}
		example.SetGroupVersionKind(gvr.GroupVersion().WithKind("Widget"))
		inf := cache.NewSharedIndexInformer(srv.ListerWatcher(lwo), example, 0, cache.Indexers{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		churnUnderFaults(t, srv, lwo, inf.GetStore().List)
		list, err := srv.ListerWatcher(lwo).ListWithContext(ctx, metav1.ListOptions{})
		mustNoErr(t, err)
		if _, ok := list.(*unstructured.UnstructuredList); !ok {
			t.Errorf("list is %T", list)
		}
		cancel()
		<-done
	})
}

var _ runtime.Object = (*unstructured.UnstructuredList)(nil)
