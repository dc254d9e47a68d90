package factory

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// item is a stand-in informer: it records its runs and returns when its
// context ends.
type item struct {
	name string
	runs atomic.Int32
}

func (i *item) run(ctx context.Context) {
	i.runs.Add(1)
	<-ctx.Done()
}

func keysOf[I any](m map[string]I) []string { return slices.Sorted(maps.Keys(m)) }

// Built once per key; started once each, also when Start is called again;
// Started lists what Start started, All everything built.
func TestLifecycleBuildsAndStartsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Lifecycle[string, *item]
		builds := 0
		get := func(key string) *item {
			it, err := l.Get(key, func() (*item, error) { builds++; return &item{name: key}, nil })
			if err != nil {
				t.Fatal(err)
			}
			return it
		}
		a := get("a")
		if get("a") != a || builds != 1 {
			t.Fatalf("a built %d times", builds)
		}
		if _, err := l.Get("broken", func() (*item, error) { return nil, errors.New("no") }); err == nil {
			t.Fatal("a failed build must fail Get")
		}
		ctx, cancel := context.WithCancel(t.Context())
		run := func(ctx context.Context, it *item) { it.run(ctx) }
		l.Start(ctx, run)
		b := get("b")
		if got := keysOf(l.Started()); !slices.Equal(got, []string{"a"}) {
			t.Errorf("started %v; want [a]", got)
		}
		l.Start(ctx, run)
		synctest.Wait()
		if got := keysOf(l.All()); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("all %v; want [a b]", got)
		}
		if a.runs.Load() != 1 || b.runs.Load() != 1 {
			t.Errorf("runs a=%d b=%d; want one each", a.runs.Load(), b.runs.Load())
		}
		cancel()
		l.Shutdown()
	})
}

// client-go's Shutdown: waits for the runs to end by their own context,
// starts nothing more, still builds. Factory's Stop: ends the runs, and
// refuses to build with Refuse set.
func TestLifecycleShutdownAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Lifecycle[string, *item]
		build := func() (*item, error) { return &item{}, nil }
		_, _ = l.Get("a", build)
		ctx, cancel := context.WithCancel(t.Context())
		l.Start(ctx, func(ctx context.Context, it *item) { it.run(ctx) })
		done := make(chan struct{})
		go func() { l.Shutdown(); close(done) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Shutdown returned while a run's context was live")
		default:
		}
		cancel()
		<-done
		late, err := l.Get("late", build)
		if err != nil {
			t.Fatalf("after Shutdown without Refuse, Get = %v", err)
		}
		l.Start(t.Context(), func(ctx context.Context, it *item) { it.run(ctx) })
		synctest.Wait()
		if late.runs.Load() != 0 {
			t.Error("Start after Shutdown started an informer")
		}

		stopped := Lifecycle[string, *item]{Refuse: errors.New("stopped")}
		it, _ := stopped.Get("a", build)
		stopped.Start(t.Context(), func(ctx context.Context, it *item) { it.run(ctx) })
		synctest.Wait()
		stopped.Stop() // returns: it ends the runs
		if it.runs.Load() != 1 {
			t.Errorf("runs %d; want 1", it.runs.Load())
		}
		if _, err := stopped.Get("b", build); err == nil || err.Error() != "stopped" {
			t.Errorf("Get after Stop = %v; want Refuse", err)
		}
		if got, err := stopped.Get("a", build); err != nil || got != it {
			t.Errorf("Get of a built key after Stop = %v, %v; want it", got, err)
		}
	})
}
