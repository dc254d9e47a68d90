package crcache_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/informer"
)

// freshCache runs a cache from newCache over srv, served in memory, in the
// current synctest bubble until the test ends.
func freshCache(t *testing.T, srv *fake.Server, opts cache.Options) cache.Cache {
	t.Helper()
	cfg, stopHTTP := fakeapi.Pipe(fakeapi.Handler(srv, fakeapi.Options{ReportError: func(err error) { t.Errorf("fakeapi: %v", err) }}))
	opts.Mapper = mapper()
	c, err := crcache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), logr.Discard()))
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done; stopHTTP() })
	return c
}

// Fresh for a type: against a watch that delivers every event 3 s late,
// it returns once the write made before the call is in the cache, with
// one list of at most one object from a quorum read; a failing request is
// the server's error.
func TestFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		c := freshCache(t, srv, cache.Options{})
		ctx := t.Context()
		if err := crcache.Fresh(ctx, c, &corev1.ConfigMap{}); err != nil {
			t.Fatalf("Fresh of an informer not yet made: %v", err)
		}
		if err := srv.InjectWatchFault(fake.WatchFault{Delay: 3 * time.Second}); err != nil {
			t.Fatal(err)
		}
		srv.CloseWatches(fake.ConfigMaps().GVR) // the next watch is delayed
		synctest.Wait()
		obj, err := srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
		if err != nil {
			t.Fatal(err)
		}
		written := obj.(*corev1.ConfigMap)
		var got corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKeyFromObject(written), &got); !apierrors.IsNotFound(err) {
			t.Fatalf("Get before Fresh: %v, want NotFound (the watch is 3 s late)", err)
		}
		srv.ResetCalls()
		start := time.Now()
		if err := crcache.Fresh(ctx, c, &corev1.ConfigMap{}); err != nil {
			t.Fatalf("Fresh: %v", err)
		}
		if d := time.Since(start); d == 0 {
			t.Error("Fresh returned at once with the watch 3 s late")
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(written), &got); err != nil || got.ResourceVersion != written.ResourceVersion {
			t.Fatalf("Get after Fresh: %v, resource version %q, want %q", err, got.ResourceVersion, written.ResourceVersion)
		}
		var lists []fake.Call
		for _, call := range srv.Calls() {
			if call.Verb == fake.VerbList {
				lists = append(lists, call)
			}
		}
		if len(lists) != 1 || lists[0].Options.Limit != 1 || lists[0].Options.ResourceVersion != "" {
			t.Errorf("Fresh's lists: %v, want one with limit 1 from a quorum read", lists)
		}

		if err := srv.FailNext(fake.Failure{Verbs: fake.VerbList, Times: 1, Kind: fake.Forbidden}); err != nil {
			t.Fatal(err)
		}
		if err := crcache.Fresh(ctx, c, &corev1.ConfigMap{}); !apierrors.IsForbidden(err) {
			t.Errorf("Fresh through a 403: %v", err)
		}
	})
}

// An informer that is not listwatch's cannot tell freshness.
func TestFreshNotListwatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		c := freshCache(t, srv, cache.Options{NewInformer: toolscache.NewSharedIndexInformer})
		if err := crcache.Fresh(t.Context(), c, &corev1.ConfigMap{}); !errors.Is(err, informer.ErrFreshnessUnknown) {
			t.Errorf("Fresh with client-go's informer: %v, want ErrFreshnessUnknown", err)
		}
	})
}

// A sharded informer is refused, without a request that would start a
// list cycle of its shard.Source.
func TestFreshSharded(t *testing.T) {
	w := newShardWorld(t, fake.ShardSelectorsIgnored)
	m := w.start("a", nil)
	if !m.cache.WaitForCacheSync(t.Context()) {
		t.Fatal("the cache did not sync")
	}
	w.srv.ResetCalls()
	if err := crcache.Fresh(t.Context(), m.cache, &corev1.ConfigMap{}); !errors.Is(err, informer.ErrFreshnessUnknown) {
		t.Errorf("Fresh of a sharded informer: %v, want ErrFreshnessUnknown", err)
	}
	for _, call := range w.srv.Calls() {
		if call.Verb == fake.VerbList {
			t.Errorf("Fresh of a sharded informer listed: %v", call)
		}
	}
}
