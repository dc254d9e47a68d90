package crcache_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

const (
	hostileNames = 30 // the server's ConfigMaps are drawn among this many names
	hostileFor   = 3 * time.Minute
	// behaveFor is how long the server then behaves before the cache is
	// compared with it: longer than the backoff cap with jitter (60 s)
	// and a watch's timeout.
	behaveFor = 12 * time.Minute
	// requestsPerMinute bounds the requests one informer may send in any
	// 60 s: client-go's backoff (800 ms doubling to 30 s) lets at most 8
	// attempts through in a minute (test/hostile's attemptsPerMinute), and
	// one attempt of a cache informer makes at most 5 requests (a
	// streaming list, a list, a second list after a 410, the watch, and
	// one spare).
	requestsPerMinute = 8 * 5
)

// TestHostileServerThroughTheCache is test/hostile's property through
// controller-runtime's cache built by crcache.New, over HTTP (in memory,
// virtual time): over random schedules of a server that fails lists and
// watches (403, 404, 410, 429, 500, refused connections, errors inside
// a watch, watches closed early) for three minutes while objects are
// written every second, the server never gets more requests in a minute
// than the backoff allows, and once it behaves, the cache's List equals
// the server's objects.
func TestHostileServerThroughTheCache(t *testing.T) {
	seeds := 50
	if testing.Short() {
		seeds = 10
	}
	worst := 0
	for seed := range uint64(seeds) {
		synctest.Test(t, func(t *testing.T) {
			if n := hostileRun(t, seed); n > worst {
				worst = n
			}
		})
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
	t.Logf("%d schedules; the busiest minute had %d requests (bound %d)", seeds, worst, requestsPerMinute)
}

// hostileRun runs one schedule and returns its busiest minute's requests.
func hostileRun(t *testing.T, seed uint64) int {
	ctx := klog.NewContext(t.Context(), logr.Discard())
	rng := rand.New(rand.NewPCG(seed, 29))
	srv := fake.NewTestServer(t, fake.Options{})
	var mu sync.Mutex
	var requests []time.Time
	h := fakeapi.Handler(srv, fakeapi.Options{ReportError: func(err error) { t.Errorf("fakeapi: %v", err) }})
	cfg, stopHTTP := fakeapi.Pipe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, time.Now())
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer stopHTTP()
	want := map[string]string{} // the server's objects: name → resource version
	write := func() {
		name := fmt.Sprintf("cm-%02d", rng.IntN(hostileNames))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "h", Name: name}, Data: map[string]string{"v": fmt.Sprint(rng.Uint64())}}
		var out runtime.Object
		var err error
		switch _, exists := want[name]; {
		case !exists:
			out, err = srv.Create(ctx, cm)
		case rng.IntN(3) == 0:
			if _, err = srv.Delete(ctx, cm); err == nil {
				delete(want, name)
				return
			}
		default:
			out, err = srv.Update(ctx, cm)
		}
		if err != nil {
			t.Fatalf("writing %s: %v", name, err)
		}
		want[name] = out.(*corev1.ConfigMap).ResourceVersion
	}
	for range hostileNames {
		write()
	}
	c, err := crcache.New(cfg, cache.Options{Mapper: mapper(), DefaultNamespaces: map[string]cache.Config{"h": {}}})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(cctx)
	}()
	defer func() { cancel(); <-done }()
	if _, err := c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
		t.Fatal(err)
	}
	kinds := []fake.FailureKind{fake.Forbidden, fake.NotFound, fake.Expired, fake.TooManyRequests, fake.InternalError, fake.ConnectionRefused}
	for range int(hostileFor / time.Second) {
		time.Sleep(time.Second)
		write()
		switch rng.IntN(4) {
		case 0:
			k := kinds[rng.IntN(len(kinds))]
			_ = srv.FailNext(fake.Failure{Kind: k, Times: 1 + rng.IntN(3), InStream: k != fake.ConnectionRefused && rng.IntN(2) == 0})
		case 1:
			_ = srv.InjectWatchFault(fake.WatchFault{Times: 1, CloseAfterEvents: 1 + rng.IntN(3)})
		case 2:
			srv.CloseWatches(fake.ConfigMaps().GVR) // the next requests meet the faults
		}
	}
	srv.ClearFaults()
	time.Sleep(behaveFor)
	synctest.Wait()

	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace("h")); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cm := range list.Items {
		got[cm.Name] = cm.ResourceVersion
	}
	if !maps.Equal(got, want) {
		t.Errorf("seed %d: the cache (%d objects) differs from the server (%d)", seed, len(got), len(want))
	}
	mu.Lock()
	defer mu.Unlock()
	busiest := 0
	for i := range requests {
		j, _ := slices.BinarySearchFunc(requests, requests[i].Add(time.Minute), func(a, b time.Time) int { return a.Compare(b) })
		busiest = max(busiest, j-i)
	}
	if busiest > requestsPerMinute {
		t.Errorf("seed %d: %d requests in one minute (bound %d)", seed, busiest, requestsPerMinute)
	}
	if t.Failed() {
		for _, c := range srv.Calls() {
			t.Log(c)
		}
	}
	return busiest
}
