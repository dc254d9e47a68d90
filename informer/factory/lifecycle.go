package factory

import (
	"context"
	"sync"
)

// Lifecycle is the one lifecycle of a factory's informers, which
// [Factory] and the client-go door's factories (clientgo/informers and
// the dynamic and metadata-only ones) all run: informers held by key,
// built once, each started at most once, run until their context ends or
// Stop, and awaited by Shutdown. The zero value is ready to use; a
// Lifecycle must not be copied after first use.
//
// Client-go's factories and [Factory] differ in two decisions, which their
// callers make: after Shutdown client-go's factories still hand out (and
// never start) informers, where Factory refuses them (Refuse); and
// client-go's Shutdown only waits for the informers (their stop channel
// must close), where Factory's cancels them first ([Lifecycle.Stop]).
type Lifecycle[K comparable, I any] struct {
	// Refuse, when not nil, is what Get returns for a key it would build
	// after Shutdown or Stop. Set before first use.
	Refuse error

	mu sync.Mutex
	// items holds every informer built, by key; started the keys Start
	// has started (a subset of items' keys).
	items   map[K]I
	started map[K]bool
	// cancels end the contexts of the informers started; wg counts those
	// still running.
	cancels []context.CancelFunc
	wg      sync.WaitGroup
	// shutdown is set by Shutdown and Stop, never cleared: Start then
	// starts nothing.
	shutdown bool
}

// Get returns the informer of key, building it with build on first use.
// build runs under the lifecycle's lock, so at most once per key, and must
// not call back into the lifecycle; an error from it is returned and
// nothing is kept.
func (l *Lifecycle[K, I]) Get(key K, build func() (I, error)) (I, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if item, ok := l.items[key]; ok {
		return item, nil
	}
	var zero I
	if l.shutdown && l.Refuse != nil {
		return zero, l.Refuse
	}
	item, err := build()
	if err != nil {
		return zero, err
	}
	if l.items == nil {
		l.items = map[K]I{}
		l.started = map[K]bool{}
	}
	l.items[key] = item
	return item, nil
}

// Start runs every informer not yet started with run, each on its own
// goroutine, under a context derived from ctx that ends when ctx does,
// at Stop, or when run returns. After Shutdown or Stop it starts nothing.
func (l *Lifecycle[K, I]) Start(ctx context.Context, run func(context.Context, I)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shutdown {
		return
	}
	for key, item := range l.items {
		if l.started[key] {
			continue
		}
		l.started[key] = true
		runCtx, cancel := context.WithCancel(ctx)
		l.cancels = append(l.cancels, cancel)
		l.wg.Go(func() {
			defer cancel()
			run(runCtx, item)
		})
	}
}

// Started returns the informers Start has started, by key; the map is the
// caller's.
func (l *Lifecycle[K, I]) Started() map[K]I {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[K]I, len(l.started))
	for key := range l.started {
		out[key] = l.items[key]
	}
	return out
}

// All returns every informer built, started or not, by key; the map is
// the caller's.
func (l *Lifecycle[K, I]) All() map[K]I {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[K]I, len(l.items))
	for key, item := range l.items {
		out[key] = item
	}
	return out
}

// Shutdown makes Start start nothing more (and Get refuse, with Refuse
// set) and waits until every started informer has returned: their
// contexts must end. It may be called more than once, also concurrently.
func (l *Lifecycle[K, I]) Shutdown() {
	l.mu.Lock()
	l.shutdown = true
	l.mu.Unlock()
	l.wg.Wait()
}

// Stop is Shutdown that first ends the context of every informer started.
func (l *Lifecycle[K, I]) Stop() {
	l.mu.Lock()
	l.shutdown = true
	for _, cancel := range l.cancels {
		cancel()
	}
	l.cancels = nil
	l.mu.Unlock()
	l.wg.Wait()
}
