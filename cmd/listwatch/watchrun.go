package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
)

// watchOptions are a resolved watch: what to cache and how to report.
type watchOptions struct {
	name          string // the resource, for messages ("pods", "deployments.apps")
	namespace     string // "" all namespaces
	allNamespaces bool   // print the NAMESPACE column
	label, field  string // selectors; "" none
	watchOnly     bool
	statsInterval time.Duration // 0: final statistics only
	duration      time.Duration // 0: until ctx ends
	pageSize      int64         // 0: unpaginated
}

// watchRun is one running watch: its informer and its counters.
type watchRun[T store.Object] struct {
	o      watchOptions
	inf    *informer.Informer[T]
	reg    *informer.Registration[T]
	src    *countingSource
	m      *counters
	start  time.Time
	stderr io.Writer
}

// runWatch caches src in an informer and prints every change to stdout
// and progress and statistics to stderr, until ctx ends or o.duration
// passes. It fails if the server refuses the initial list for good
// (forbidden, unauthorized, not found).
func runWatch[T store.Object](ctx context.Context, src cache.ListerWatcherWithContext, o watchOptions, stdout, stderr io.Writer) error {
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pageSize := o.pageSize
	if pageSize == 0 {
		pageSize = -1
	}
	r := &watchRun[T]{o: o, src: &countingSource{inner: src, label: o.label, field: o.field}, m: newCounters(),
		start: time.Now(), stderr: stderr}
	var err error
	r.inf, err = informer.New(informer.Options[T]{Name: o.name, Source: r.src, Transform: informer.StripManagedFields[T],
		Reflector: reflector.Config[T]{PageSize: pageSize, Metrics: r.m}})
	if err != nil {
		return err
	}
	p := newEventPrinter[T](stdout, o.allNamespaces, o.watchOnly)
	inOrder := informer.InOrder
	if r.reg, err = r.inf.AddHandler(p, informer.HandlerOptions{Delivery: &inOrder}); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = r.inf.Run(ctx) })
	err = r.loop(ctx)
	cancel()
	wg.Wait()
	fmt.Fprintln(stderr, r.statsLine("final"))
	return err
}

// loop reports initial-list progress every second until the informer has
// synced, then statistics every o.statsInterval, until ctx ends.
func (r *watchRun[T]) loop(ctx context.Context) error {
	synced := make(chan struct{})
	go func() {
		if r.inf.WaitForSync(ctx) == nil {
			close(synced)
		}
	}()
	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-progress.C:
			if err := r.syncProblem(); err != nil {
				return err
			}
			fmt.Fprintln(r.stderr, r.progressLine())
			continue
		case <-synced:
		}
		break
	}
	progress.Stop()
	how := "streaming list"
	if pages := r.src.pages.Load(); pages > 0 {
		how = fmt.Sprintf("%d list pages", pages)
	}
	fmt.Fprintf(r.stderr, "synced %d %s in %s (%s)\n", r.inf.Reader().Len(), r.o.name,
		time.Since(r.start).Round(time.Millisecond), how)
	if r.o.statsInterval == 0 {
		<-ctx.Done()
		return nil
	}
	stats := time.NewTicker(r.o.statsInterval)
	defer stats.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-stats.C:
			fmt.Fprintln(r.stderr, r.statsLine("stats"))
		}
	}
}

// syncProblem returns an error when the initial list failed for a reason
// retrying will not fix.
func (r *watchRun[T]) syncProblem() error {
	if st := r.inf.Status(); st.LastError != nil && st.Reason.Lasting() {
		return fmt.Errorf("cannot list %s: %w", r.o.name, st.LastError)
	}
	return nil
}

func (r *watchRun[T]) progressLine() string {
	st := r.inf.Status()
	listed, streamed := r.src.listed.Load(), r.m.events.Load()
	line := fmt.Sprintf("initial sync of %s: %d objects received so far (%d in %d list pages, %d streamed; phase %s, %s)",
		r.o.name, listed+streamed, listed, r.src.pages.Load(), streamed, st.Phase, time.Since(r.start).Round(time.Second))
	if st.LastError != nil {
		line += fmt.Sprintf("; retrying after %s (%d failures): %v", st.Reason, st.Failures, st.LastError)
	}
	return line
}

func (r *watchRun[T]) statsLine(prefix string) string {
	st := r.inf.Status()
	ls := r.reg.Stats()
	elapsed := time.Since(r.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(r.m.events.Load()) / elapsed.Seconds()
	}
	relists, _ := r.m.snapshot()
	lastErr := "none"
	if st.LastError != nil {
		lastErr = st.Reason.String()
	}
	return fmt.Sprintf("%s: %d %s cached, %d watch events (%.1f/s), %d lists, %d watches, relists %s, printer pending %d, phase %s, last error %s",
		prefix, r.inf.Reader().Len(), r.o.name, r.m.events.Load(), rate, r.m.lists.Load(), r.m.watches.Load(),
		formatCounts(relists), ls.Pending, st.Phase, lastErr)
}
