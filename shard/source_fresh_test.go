package shard_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/shard"
)

// Fresh on an informer over a shard.Source asks the inner source for the
// server's resource version with one list of at most one object from a
// quorum read, without a shard selector and without starting a list cycle,
// and returns once the member's pods written before the call are cached.
// WaitForResourceVersion's check works through it too.
func TestSourceFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := fake.NewServer(fake.Options{UIDSeed: 31})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.InjectWatchFault(fake.WatchFault{Delay: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		pods := createPods(t.Context(), t, srv, 20)
		src, err := shard.NewSource(t.Context(), shard.SourceOptions{Inner: srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR})})
		if err != nil {
			t.Fatal(err)
		}
		two := shard.MustAssign([]string{"a", "b"}, shard.Options{Slices: 64})
		src.Update(shard.Change{Member: "a", Assignment: two})
		inf, err := informer.New(informer.Options[*corev1.Pod]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		shard.Attach(src, inf)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- inf.Run(ctx) }()
		defer func() { cancel(); <-done }()
		if err := inf.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		// More pods, which the delayed watch brings 2 s late.
		for i := range 20 {
			p, err := srv.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "late" + strconv.Itoa(i)}})
			if err != nil {
				t.Fatal(err)
			}
			pods = append(pods, p.(*corev1.Pod))
		}
		before := src.Stats()
		srv.ResetCalls()
		start := time.Now()
		if err := inf.Fresh(t.Context()); err != nil {
			t.Fatalf("Fresh: %v", err)
		}
		if time.Since(start) == 0 {
			t.Error("Fresh returned at once with the watch 2 s behind")
		}
		want := ownedBy(pods, two, "a")
		slices.Sort(want)
		if got := cachedNames(inf); !slices.Equal(got, want) {
			t.Errorf("after Fresh a caches %v, want %v", got, want)
		}
		var lists []fake.Call
		for _, c := range srv.Calls() {
			if c.Verb == fake.VerbList {
				lists = append(lists, c)
			}
		}
		if len(lists) != 1 || lists[0].Options.Limit != 1 || lists[0].Options.ResourceVersion != "" || lists[0].Options.ShardSelector != "" ||
			lists[0].ListResourceVersion != srv.ResourceVersion() {
			t.Errorf("Fresh's requests: %v, want one list with limit 1 from a quorum read at %s, no shard selector", lists, srv.ResourceVersion())
		}
		if after := src.Stats(); after.Lists != before.Lists || after.LocalRelists != before.LocalRelists ||
			after.ConfirmLists != before.ConfirmLists || after.Reassignments != before.Reassignments {
			t.Errorf("Fresh changed the source's figures: %+v, then %+v", before, after)
		}

		// A version the server has not issued: the check, through the
		// source, ends the wait after a second.
		future := strconv.FormatUint(mustRV(t, srv.ResourceVersion())+5, 10)
		wctx, wcancel := context.WithTimeout(t.Context(), time.Minute)
		defer wcancel()
		start = time.Now()
		if err := inf.WaitForResourceVersion(wctx, future); !errors.Is(err, informer.ErrFutureResourceVersion) {
			t.Errorf("WaitForResourceVersion(%s): %v, want ErrFutureResourceVersion", future, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the wait for a future version lasted %v", d)
		}

		// A failing request is the server's error, never fresh.
		if err := srv.FailNext(fake.Failure{Verbs: fake.VerbList, Times: 1, Kind: fake.Forbidden}); err != nil {
			t.Fatal(err)
		}
		if err := inf.Fresh(t.Context()); !apierrors.IsForbidden(err) {
			t.Errorf("Fresh through a 403: %v", err)
		}
	})
}

func mustRV(t *testing.T, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
