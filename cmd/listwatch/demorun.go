package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/examples/reconciler"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/reflector"
)

// slowWork is what the demo's slow handler spends on each notification,
// standing in for a handler that calls out to something slow.
const slowWork = 2 * time.Millisecond

// demoBackoff retries sooner than client-go's defaults (800ms doubling to
// 30s, reset after 2m without failures), so that a one-minute demo with a
// fault every few seconds shows recovery rather than long waits.
var demoBackoff = reflector.Backoff{Initial: 200 * time.Millisecond, Max: time.Second, ResetAfter: 5 * time.Second}

// demo is one run of the demo command.
type demo struct {
	cl    *demoCluster
	d     *demoFlags
	out   io.Writer
	inf   *informer.Informer[*corev1.ConfigMap]
	src   *countingSource
	m     *counters
	ctrl  *reconciler.Controller
	hs    []*watchedHandler // the demo's own handlers, for lag figures
	obs   *observer         // --listen: the status page and metrics; nil without
	start time.Time         // when the informer started
	// churn outcome: writes done and writes refused (conflicts with the
	// controller, objects deleted meanwhile).
	writes, writeErrs atomic.Int64
	lastWriteErr      atomic.Pointer[string] // the latest refusal, for the summary
}

// watchedHandler is a handler registration with the worst lag seen.
type watchedHandler struct {
	name       string
	reg        *informer.Registration[*corev1.ConfigMap]
	maxPending int
	maxOldest  time.Duration
}

// runDemo seeds the cluster, runs the controller under churn and faults
// for d.duration, lets it converge, and checks the cache against the
// server. It returns an error when they differ.
func runDemo(ctx context.Context, cl *demoCluster, d *demoFlags, out io.Writer) error {
	fmt.Fprintf(out, "listwatch demo against %s: %d seed objects, %.0f churn writes/s for %s, %d controller workers\n",
		cl.desc, d.objects, d.rate, d.duration, d.workers)
	bg := context.WithoutCancel(ctx)
	t0 := time.Now()
	if err := cl.seed(bg, d.objects); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	fmt.Fprintf(out, "seeded %d ConfigMaps in %s\n", d.objects, time.Since(t0).Round(time.Millisecond))
	fmt.Fprintf(out, "handlers: the controller's, audit (in-order, no work) and slow (coalescing, %s per call); lag shown as pending/oldest\n", slowWork)
	fmt.Fprintf(out, "reflector backoff %s doubling to %s (reset after %s without failures)\n", demoBackoff.Initial, demoBackoff.Max, demoBackoff.ResetAfter)
	s := &demo{cl: cl, d: d, out: out, src: &countingSource{inner: cl.source}, m: newCounters()}
	if d.listen != "" {
		obs, err := listen(ctx, d.listen, out)
		if err != nil {
			return err
		}
		defer obs.close()
		s.obs = obs
		fmt.Fprintf(out, "status page %s (JSON: %s?format=json), Prometheus metrics %smetrics\n", obs.url, obs.url, obs.url)
	}
	if err := s.build(bg); err != nil {
		return err
	}
	infCtx, stopInf := context.WithCancel(bg)
	ctrlCtx, stopCtrl := context.WithCancel(bg)
	var infWG, ctrlWG sync.WaitGroup
	defer func() { stopCtrl(); ctrlWG.Wait(); stopInf(); infWG.Wait() }()
	s.start = time.Now()
	infWG.Go(func() { _ = s.inf.Run(infCtx) })
	if err := s.awaitSync(ctx); err != nil {
		return err
	}
	ctrlWG.Go(func() { s.ctrl.Run(ctrlCtx, d.workers) })
	s.churnAndWatch(ctx)
	settled := s.settle(bg)
	stopCtrl()
	ctrlWG.Wait()
	diff, err := s.verify(bg)
	s.summary(settled)
	return s.verdict(diff, err)
}

// build makes the informer, the controller and the demo's two handlers.
func (s *demo) build(ctx context.Context) error {
	var err error
	opts := informer.Options[*corev1.ConfigMap]{
		Name: "configmaps", Source: s.src, Transform: informer.StripManagedFields[*corev1.ConfigMap],
		Reflector: reflector.Config[*corev1.ConfigMap]{Metrics: s.m, IdleTimeout: 30 * time.Second, Backoff: demoBackoff},
	}
	if s.obs == nil {
		s.inf, err = informer.New(opts)
	} else {
		// Through the observer's factory, so the page and /metrics see it;
		// the demo still runs it itself.
		opts.Reflector.Metrics = teeMetrics{s.m, s.obs.p.Reflector(opts.Name)}
		s.inf, err = factory.For(s.obs.f, "v1/configmaps", factory.Selection{},
			func(factory.Selection) cache.ListerWatcherWithContext { return s.src }, opts)
	}
	if err != nil {
		return err
	}
	ropts := reconciler.Options{Informer: s.inf, Writer: s.cl.writer}
	if s.obs != nil {
		ropts.Metrics = s.obs.wq
	}
	if s.ctrl, err = reconciler.New(ctx, ropts); err != nil {
		return err
	}
	inOrder := informer.InOrder
	audit := informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) {}}
	slow := informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(*corev1.ConfigMap, bool) { time.Sleep(slowWork) },
		UpdateFunc: func(_, _ *corev1.ConfigMap) { time.Sleep(slowWork) },
		DeleteFunc: func(*corev1.ConfigMap, bool) { time.Sleep(slowWork) },
	}
	for _, h := range []struct {
		name string
		h    informer.Handler[*corev1.ConfigMap]
		o    informer.HandlerOptions
	}{
		{"audit", audit, informer.HandlerOptions{Delivery: &inOrder}},
		{"slow", slow, informer.HandlerOptions{}},
	} {
		reg, err := s.inf.AddHandler(h.h, h.o)
		if err != nil {
			return err
		}
		s.hs = append(s.hs, &watchedHandler{name: h.name, reg: reg})
	}
	return nil
}

// awaitSync prints the initial sync's progress until the cache has synced.
func (s *demo) awaitSync(ctx context.Context) error {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for !s.inf.HasSynced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted before the initial sync: %w", ctx.Err())
		case <-t.C:
		}
		st := s.inf.Status()
		listed, streamed := s.src.listed.Load(), s.m.events.Load()
		fmt.Fprintf(s.out, "[%s] initial sync: %d objects received (%d listed in %d pages, %d streamed), phase %s%s\n",
			elapsed(s.start), listed+streamed, listed, s.src.pages.Load(), streamed, st.Phase, errSuffix(st))
	}
	fmt.Fprintf(s.out, "[%s] synced: %d objects cached in %s; starting the controller\n",
		elapsed(s.start), s.inf.Reader().Len(), time.Since(s.start).Round(time.Millisecond))
	return nil
}

func errSuffix(st reflector.Status) string {
	if st.LastError == nil {
		return ""
	}
	return fmt.Sprintf(", retrying after %s", st.Reason)
}
