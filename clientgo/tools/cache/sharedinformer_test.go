package cache

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

type newSII func(lw cache.ListerWatcher, example runtime.Object, resync time.Duration, idx cache.Indexers) cache.SharedIndexInformer

var siiImpls = []struct {
	name string
	new  newSII
}{
	{"listwatch", NewSharedIndexInformer},
	{"client-go", cache.NewSharedIndexInformer},
}

// compatScenario runs body against both implementations and requires both
// to produce the same transcript.
func compatScenario(t *testing.T, resync time.Duration, body func(t *testing.T, srv *fake.Server, inf cache.SharedIndexInformer, log func(string, ...any))) {
	transcripts := map[string][]string{}
	for _, im := range siiImpls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := fake.NewTestServer(t, fake.Options{})
				lw := srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})
				inf := im.new(lw, &corev1.ConfigMap{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
				var out []string
				body(t, srv, inf, func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) })
				transcripts[im.name] = out
			})
		})
	}
	sameTranscripts(t, transcripts)
}

func runSII(t *testing.T, inf cache.SharedIndexInformer) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	synctest.Wait()
}

func TestCompatSameTranscriptAsClientGo(t *testing.T) {
	compatScenario(t, 0, func(t *testing.T, srv *fake.Server, inf cache.SharedIndexInformer, log func(string, ...any)) {
		ctx := t.Context()
		a, _ := srv.Create(ctx, objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		srv.Create(ctx, objects.ConfigMap("ns", "b", objects.Data("v", "0")))
		h := &informertest.ClientGoRecorder{}
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			t.Fatal(err)
		}
		runSII(t, inf)
		// client-go's streaming list goes through a map, so its initial
		// order varies: compare sorted.
		initial := h.Take()
		slices.Sort(initial)
		log("synced=%v initial=%q", reg.HasSynced(), initial)

		a2 := a.DeepCopyObject().(*corev1.ConfigMap)
		a2.Data["v"] = "1"
		a3, _ := srv.Update(ctx, a2)
		synctest.Wait()
		srv.Delete(ctx, a3)
		synctest.Wait()
		srv.Create(ctx, objects.ConfigMap("ns", "c", objects.Data("v", "0")))
		synctest.Wait()
		log("live=%q", h.Take())
		logRVs(srv, inf, log)

		// A late handler gets the cache as initial adds (order: sorted here,
		// since both replay a map).
		late := &informertest.ClientGoRecorder{}
		lateReg, _ := inf.AddEventHandler(late)
		synctest.Wait()
		got := late.Take()
		slices.Sort(got)
		log("late synced=%v replay=%q", lateReg.HasSynced(), got)

		// Missed deletion: server down, delete, compact, up.
		missDeletion(t, srv, "b")
		time.Sleep(time.Minute)
		synctest.Wait()
		log("relist=%q late=%q", h.Take(), late.Take())
		logRVs(srv, inf, log)

		if err := inf.RemoveEventHandler(lateReg); err != nil {
			t.Fatal(err)
		}
		srv.Create(ctx, objects.ConfigMap("ns", "d", objects.Data("v", "0")))
		synctest.Wait()
		log("after-remove=%q late=%q", h.Take(), late.Take())

		lister := corev1listers.NewConfigMapLister(inf.GetIndexer())
		cms, err := lister.ConfigMaps("ns").List(labels.Everything())
		names := []string{}
		for _, c := range cms {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		log("lister=%v err=%v keys=%d", names, err, len(inf.GetStore().ListKeys()))
		if err := fake.Converged(srv, fake.LWOptions{Resource: cmGVR}, inf.GetStore().List()); err != nil {
			t.Fatal(err)
		}
	})
}

// logRVs logs whether the informer's and its indexer's resource versions
// agree with each other and with the server's, once idle.
func logRVs(srv *fake.Server, inf cache.SharedIndexInformer, log func(string, ...any)) {
	server, informer, indexer := srv.ResourceVersion(), inf.LastSyncResourceVersion(), inf.GetIndexer().LastStoreSyncResourceVersion()
	log("informer rv = server's: %v, indexer rv = server's: %v", informer == server, indexer == server)
}

func TestCompatResync(t *testing.T) {
	compatScenario(t, 30*time.Second, func(t *testing.T, srv *fake.Server, inf cache.SharedIndexInformer, log func(string, ...any)) {
		srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		every, never := &informertest.ClientGoRecorder{}, &informertest.ClientGoRecorder{}
		inf.AddEventHandler(every)
		inf.AddEventHandlerWithResyncPeriod(never, 0)
		runSII(t, inf)
		every.Take()
		never.Take()
		time.Sleep(61 * time.Second)
		synctest.Wait()
		log("every=%q never=%q", every.Take(), never.Take())
	})
}

// SetTransform(nil) means no transform, as in client-go (controller-runtime
// passes nil when none is configured).
func TestCompatNilTransform(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		inf := NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
		if err := inf.SetTransform(nil); err != nil {
			t.Fatal(err)
		}
		runSII(t, inf)
		if n := len(inf.GetStore().ListKeys()); n != 1 {
			t.Fatalf("cached %d objects, want 1", n)
		}
	})
}
