package scope_test

import (
	"context"
	"flag"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/scope"
)

var goalFull = flag.Bool("scope.goal", false, "TestGoal at issue 49's size: 100 namespaces of 1,000 objects, adding 10")

// TestGoal is issue 49's goal on the fake server: an informer over n
// namespaces of per objects gains k more. Objects listed are exactly the k
// namespaces' (not the whole new scope), each handler call is an add of
// one of them (no unchanged object told), the time until Update returns
// (the new namespaces synced) is logged beside a fresh informer's sync of
// just those namespaces; removing them makes no list request and tells
// exactly their deletions. Small by default; -scope.goal runs 100
// namespaces of 1,000 adding 10 (110,000 objects).
func TestGoal(t *testing.T) {
	n, k, per := 10, 2, 100
	if *goalFull {
		n, k, per = 100, 10, 1000
	}
	if testing.Short() && *goalFull {
		t.Skip("the full goal is not short")
	}
	srv := fake.NewTestServer(t, fake.Options{})
	for i := range n + k {
		ns := fmt.Sprintf("ns-%03d", i)
		for j := range per {
			if _, err := srv.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%04d", j)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := func(from, count int) []string {
		out := make([]string, count)
		for i := range out {
			out[i] = fmt.Sprintf("ns-%03d", from+i)
		}
		return out
	}
	before := scope.Scope{Namespaces: names(0, n)}
	after := scope.Scope{Namespaces: names(0, n+k)}

	src, inf := attached(t, inner(srv, nil), before)
	var adds, updates, deletes, unknown, calls atomic.Int64
	poke := make(chan struct{}, 1)
	called := func() {
		calls.Add(1)
		select {
		case poke <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(*corev1.ConfigMap, bool) { adds.Add(1); called() },
		UpdateFunc: func(_, _ *corev1.ConfigMap) { updates.Add(1); called() },
		DeleteFunc: func(_ *corev1.ConfigMap, u bool) {
			deletes.Add(1)
			if u {
				unknown.Add(1)
			}
			called()
		},
	}, informer.HandlerOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if err := inf.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	// delivered waits until the handler has had want calls in all.
	delivered := func(want int64) {
		t.Helper()
		for calls.Load() < want {
			select {
			case <-poke:
			case <-ctx.Done():
				t.Fatalf("%d handler calls, want %d: %v", calls.Load(), want, ctx.Err())
			}
		}
	}
	delivered(int64(n * per))
	srv.ResetCalls()
	st0 := src.Stats()
	adds.Store(0)

	began := time.Now()
	if err := src.Update(ctx, after); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	st1 := src.Stats()
	requests, _ := lists(srv)
	delivered(int64((n + k) * per))
	if got, want := st1.ListedObjects-st0.ListedObjects, int64(k*per); got != want {
		t.Fatalf("adding %d namespaces listed %d objects, want %d", k, got, want)
	}
	if len(requests) != k*((per+499)/500) {
		t.Fatalf("adding %d namespaces made %d list requests: %v", k, len(requests), requests)
	}
	if adds.Load() != int64(k*per) || updates.Load() != 0 || deletes.Load() != 0 {
		t.Fatalf("adding: %d adds, %d updates, %d deletes; want %d adds only", adds.Load(), updates.Load(), deletes.Load(), k*per)
	}

	// A fresh informer of just the gained namespaces, for the time.
	_, freshInf := attached(t, inner(srv, nil), scope.Scope{Namespaces: names(n, k)})
	fctx, fcancel := context.WithCancel(t.Context())
	fdone := make(chan error, 1)
	fbegan := time.Now()
	go func() { fdone <- freshInf.Run(fctx) }()
	if err := freshInf.WaitForSync(fctx); err != nil {
		t.Fatal(err)
	}
	freshTook := time.Since(fbegan)
	fcancel()
	if err := <-fdone; err != nil {
		t.Fatal(err)
	}

	srv.ResetCalls()
	adds.Store(0)
	if err := src.Update(ctx, before); err != nil {
		t.Fatal(err)
	}
	delivered(int64((n+k)*per + k*per))
	if got, _ := lists(srv); len(got) != 0 {
		t.Fatalf("removing: lists %v, want none", got)
	}
	if deletes.Load() != int64(k*per) || unknown.Load() != 0 || adds.Load() != 0 || updates.Load() != 0 {
		t.Fatalf("removing: %d deletes (%d unknown), %d adds, %d updates; want %d known deletes only",
			deletes.Load(), unknown.Load(), adds.Load(), updates.Load(), k*per)
	}
	t.Logf("%d namespaces of %d (%d objects), adding %d: %d objects listed in %d requests, synced in %v; a fresh informer of the %d: %v (%.2fx); removing them: 0 requests, %d known deletes",
		n, per, n*per, k, st1.ListedObjects-st0.ListedObjects, len(requests), took.Round(time.Millisecond), k,
		freshTook.Round(time.Millisecond), float64(took)/float64(freshTook), deletes.Load())
}
