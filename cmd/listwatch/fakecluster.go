package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/reconciler"
	"github.com/listwatch/listwatch/fake"
)

var demoNamespaces = []string{"team-a", "team-b", "team-c", "team-d"}

// failEvery makes one controller write in so many fail with a 500, so the
// work queue's rate-limited retries show in the status line.
const failEvery = 50

// newFakeCluster is the embedded simulated cluster: a fake.Server serving
// ConfigMaps, seeded churn, and a fault schedule.
func newFakeCluster(d *demoFlags, _ io.Writer) (*demoCluster, error) {
	srv, err := fake.NewServer(fake.Options{Resources: []fake.Resource{fake.ConfigMaps()},
		BookmarkInterval: 10 * time.Second, HistorySize: 50000, WatchBufferSize: 1000})
	if err != nil {
		return nil, err
	}
	gvr := fake.ConfigMaps().GVR
	n := d.objects
	churn, err := fake.NewChurn(srv, fake.ChurnOptions{Resource: gvr, Namespaces: demoNamespaces, Seed: d.seed,
		MaxObjects: 3*d.objects + 1000, NewObject: func(ns, name string) runtime.Object {
			n++
			return sourceConfigMap(ns, name, n)
		}})
	if err != nil {
		return nil, err
	}
	lw := srv.ListerWatcher(fake.LWOptions{Resource: gvr})
	return &demoCluster{
		desc: fmt.Sprintf("the embedded simulated cluster (fake.Server, seed %d; 1 controller write in %d fails with a 500)",
			d.seed, failEvery),
		source: lw,
		writer: &reconciler.FakeWriter{Server: srv, FailEvery: failEvery},
		seed: func(ctx context.Context, count int) error {
			for i := range count {
				if _, err := srv.Create(ctx, sourceConfigMap(demoNamespaces[i%len(demoNamespaces)], fmt.Sprintf("seed-%d", i), i)); err != nil {
					return err
				}
			}
			return nil
		},
		step:   churn.Step,
		faults: func(ctx context.Context, start time.Time, log io.Writer) { runFaults(ctx, srv, d, start, log) },
		heal:   func() { srv.ClearFaults(); srv.Up() },
		list: func(ctx context.Context) (*corev1.ConfigMapList, error) {
			obj, err := lw.ListWithContext(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return obj.(*corev1.ConfigMapList), nil
		},
		serverStats: func() string {
			s := srv.Stats()
			return fmt.Sprintf("%d lists, %d watches (%d streaming), %d writes, %d calls failed by faults, %d slow watches closed",
				s.Lists, s.Watches, s.StreamingWatches, s.Events, s.Faults, s.SlowWatchesClosed)
		},
	}, nil
}

// fault is one scripted disturbance of the simulated cluster.
type fault struct {
	what   string
	inject func(ctx context.Context, srv *fake.Server) string // returns what happened after
}

var demoFaults = []fault{
	{"server down: connections refused for 3s", func(ctx context.Context, srv *fake.Server) string {
		srv.Down()
		sleepCtx(ctx, 3*time.Second)
		srv.Up()
		return "server up again"
	}},
	{"watch stalled for 1s, then history compacted and watches closed: resuming from the old RV gets 410 Expired",
		func(ctx context.Context, srv *fake.Server) string {
			gvr := fake.ConfigMaps().GVR
			srv.Stall(gvr)
			sleepCtx(ctx, time.Second)
			_ = srv.Compact(srv.ResourceVersion())
			n := srv.CloseWatches(gvr)
			srv.Unstall(gvr)
			return fmt.Sprintf("compacted to rv %s, %d watches closed", srv.CompactedResourceVersion(), n)
		}},
	{"throttling: the next 3 lists/watches get 429 Too Many Requests (Retry-After 1s), watches closed",
		func(_ context.Context, srv *fake.Server) string {
			_ = srv.FailNext(fake.Failure{Kind: fake.TooManyRequests, Times: 3, RetryAfterSeconds: 1})
			return fmt.Sprintf("%d watches closed", srv.CloseWatches(fake.GVR{}))
		}},
	{"the next 2 watches fail in-stream with 500 Internal Error, watches closed",
		func(_ context.Context, srv *fake.Server) string {
			_ = srv.FailNext(fake.Failure{Kind: fake.InternalError, Times: 2, Verbs: fake.VerbWatch, InStream: true})
			return fmt.Sprintf("%d watches closed", srv.CloseWatches(fake.GVR{}))
		}},
}

// runFaults injects every demo fault once, in an order drawn from the
// seed, spread evenly over the churn so the last one has time to heal.
func runFaults(ctx context.Context, srv *fake.Server, d *demoFlags, start time.Time, log io.Writer) {
	order := rand.New(rand.NewPCG(d.seed, 0x66617573)).Perm(len(demoFaults))
	period := d.duration / time.Duration(len(demoFaults)+1)
	for i, idx := range order {
		if !sleepCtx(ctx, time.Until(start.Add(period*time.Duration(i+1)))) {
			return
		}
		f := demoFaults[idx]
		fmt.Fprintf(log, "[%s] fault: %s\n", elapsed(start), f.what)
		after := f.inject(ctx, srv)
		fmt.Fprintf(log, "[%s] fault: %s\n", elapsed(start), after)
	}
}

// elapsed formats the time since start for log prefixes.
func elapsed(start time.Time) string {
	return fmt.Sprintf("%4.0fs", time.Since(start).Seconds())
}
