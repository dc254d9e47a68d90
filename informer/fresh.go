package informer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/internal/resourceversion"
	"github.com/listwatch/listwatch/reflector"
)

// ErrFutureResourceVersion says that a resource version is beyond the
// server's current one, so the server never issued it: the cache was told
// it by a broken or hostile server or proxy ([Informer.Fresh], which then
// relists), or a caller asked to wait for it
// ([Informer.WaitForResourceVersion]). Test for it with errors.Is.
var ErrFutureResourceVersion = errors.New("resource version beyond the server's current one")

// ErrFreshnessUnknown says that [Informer.Fresh] could not learn the
// server's current resource version: the source cannot be asked without
// disturbing it (an [Owner] that does not implement
// [CurrentResourceVersioner]; shard.Source does), or the server's answer carried no numeric
// resource version (client-go's fake clientset, some proxies). The cache
// is not reported fresh.
var ErrFreshnessUnknown = errors.New("the server's current resource version is unknown")

// CurrentResourceVersioner is an optional interface of a source
// (Options.Source). [Informer.Fresh] and [Informer.WaitForResourceVersion]
// call it, when the source has it, to learn the server's current resource
// version for what the source serves, instead of a list with Limit 1 and
// ResourceVersion "" through the source's ListWithContext. A source whose
// lists do more than list (an [Owner]: shard.Source starts a list cycle
// with each first page) implements it to be usable with Fresh; shard.Source
// does, with a list of its inner source.
type CurrentResourceVersioner interface {
	CurrentResourceVersion(ctx context.Context) (string, error)
}

// futureCheckAfter is how long WaitForResourceVersion waits before it asks
// the server once whether the resource version it waits for was issued at
// all. A write's resource version normally reaches the cache in
// milliseconds: only a wait that lasts costs a request.
const futureCheckAfter = time.Second

// Fresh returns nil once the cache reflects everything the server had
// committed when Fresh was called: every write acknowledged before the
// call, of the objects the source serves, is in the cache. Call it before
// a disruptive action (a deletion, a scale-down, an eviction) decided from
// the cache, and hold the action while it fails (docs/operations.md,
// "Freshness").
//
// It asks the server for its current resource version with the cheapest
// consistent request, a list with Limit 1 and ResourceVersion "" (a quorum
// read) through the source's ListWithContext, so the source's namespace
// and selectors apply (a source that implements [CurrentResourceVersioner]
// is asked that instead), then waits, like
// [Informer.WaitForResourceVersion], until the cache has reached that
// resource version, or ctx ends. A cache in step costs that one request
// and returns at once. A kube-apiserver's resource version counts the
// writes of every resource: a cache of a resource nobody writes reaches
// the one the list returned with the watch's next bookmark (about once a
// minute), so give ctx a deadline that allows for it.
//
// It never reports fresh what it could not check:
//   - the request fails (403, 429, 5xx, a timeout): that error, wrapped
//     (apierrors.IsForbidden and errors.Is work on it);
//   - no numeric resource version can be learned: [ErrFreshnessUnknown];
//   - ctx ends first: a *[NotSyncedError] wrapping ctx's error;
//   - the cache's resource version, before the request, was already beyond
//     the server's: the cache was told one the server never issued (a bogus
//     event or bookmark from the future, which nothing else can detect
//     while the watch stays quiet). Fresh asks for a relist
//     ([Informer.Relist]) and returns an error wrapping
//     [ErrFutureResourceVersion] at once.
//
// With Options.FreshnessBound set, a call whose wait lasts longer than
// the bound marks the informer stale ([Informer.Freshness], its Snapshot
// and its Status, see [ErrStale]) and goes on waiting until ctx ends (give
// ctx more time than the bound: a call that ends sooner marks nothing); a
// cache found beyond the server's resource version is marked stale too.
// The call that next succeeds clears the mark. A request that fails
// changes nothing.
func (inf *Informer[T]) Fresh(ctx context.Context) error {
	before := inf.rv.peek()
	server, err := inf.serverResourceVersion(ctx)
	if err != nil {
		return err
	}
	inf.fresh.learnt(server)
	bound := inf.opts.FreshnessBound
	if before > server {
		err := fmt.Errorf("informer %s: the cache is at resource version %d but the server's current one is %d: %w; relisting",
			inf.name, before, server, ErrFutureResourceVersion)
		if bound > 0 {
			inf.fresh.markStale(server, StaleFutureResourceVersion, reflector.ReasonInvalidResourceVersion,
				fmt.Errorf("%w: %w", ErrStale, err))
		}
		inf.Relist()
		return err
	}
	var onBound func(applied uint64)
	if bound > 0 {
		onBound = func(applied uint64) {
			inf.fresh.markStale(server, StaleBehind, reflector.ReasonOther,
				fmt.Errorf("informer %s: %w: its resource version %d did not reach the server's %d (%d behind) within %v",
					inf.name, ErrStale, applied, server, server-applied, bound))
		}
	}
	if err := inf.waitForRV(ctx, server, "the server's current resource version "+strconv.FormatUint(server, 10), false, bound, onBound); err != nil {
		return err
	}
	inf.fresh.succeeded(server, inf.clock.Now())
	return nil
}

// serverResourceVersion asks the server for its current resource version
// (see Fresh).
func (inf *Informer[T]) serverResourceVersion(ctx context.Context) (uint64, error) {
	var rv string
	cur, isCur := sourceAs[CurrentResourceVersioner](inf.opts.Source)
	_, isOwner := sourceAs[Owner](inf.opts.Source)
	switch {
	case isCur:
		v, err := cur.CurrentResourceVersion(ctx)
		if err != nil {
			return 0, fmt.Errorf("informer %s: asking the server for its current resource version: %w", inf.name, err)
		}
		rv = v
	case isOwner:
		return 0, fmt.Errorf("informer %s: its source serves a part of the resource and cannot be asked for its current resource version: %w",
			inf.name, ErrFreshnessUnknown)
	default:
		obj, err := inf.opts.Source.ListWithContext(ctx, metav1.ListOptions{Limit: 1, ResourceVersion: ""})
		if err != nil {
			return 0, fmt.Errorf("informer %s: asking the server for its current resource version: %w", inf.name, err)
		}
		if obj == nil {
			return 0, fmt.Errorf("informer %s: the server answered no list: %w", inf.name, ErrFreshnessUnknown)
		}
		acc, err := meta.ListAccessor(obj)
		if err != nil {
			return 0, fmt.Errorf("informer %s: the server's answer %T is not a list (%v): %w", inf.name, obj, err, ErrFreshnessUnknown)
		}
		rv = acc.GetResourceVersion()
	}
	n, ok := resourceversion.Parse(rv)
	if !ok {
		return 0, fmt.Errorf("informer %s: the server's list carries resource version %q, not a number: %w", inf.name, rv, ErrFreshnessUnknown)
	}
	return n, nil
}

// serverAnswer is the outcome of one serverResourceVersion call.
type serverAnswer struct {
	rv  uint64
	err error
}

// waitForRV blocks until the cache's watermark reaches target or ctx
// ends; waiting names what for in the error. With check, a wait still
// blocked after futureCheckAfter asks the server once for its current
// resource version, and a target beyond it ends the wait with
// ErrFutureResourceVersion. A failed check is ignored: the wait goes on.
// With bound positive, a wait still blocked after it calls onBound once
// with the watermark, and goes on.
func (inf *Informer[T]) waitForRV(ctx context.Context, target uint64, waiting string, check bool, bound time.Duration, onBound func(applied uint64)) error {
	var (
		timer   <-chan time.Time
		answers chan serverAnswer
		bounded <-chan time.Time
	)
	if _, owner := sourceAs[Owner](inf.opts.Source); owner {
		if _, ok := sourceAs[CurrentResourceVersioner](inf.opts.Source); !ok {
			// A shard.Source's list is a cycle of its own, and it waits
			// on this very barrier while serving one: never list
			// through it from here.
			check = false
		}
	}
	for {
		applied, changed := inf.rv.get()
		if applied >= target {
			return nil
		}
		if bound > 0 && onBound != nil && bounded == nil && ctx.Err() == nil {
			t := inf.clock.NewTimer(bound)
			defer t.Stop()
			bounded = t.C()
		}
		if check && timer == nil && answers == nil && ctx.Err() == nil {
			t := inf.clock.NewTimer(futureCheckAfter)
			defer t.Stop()
			timer = t.C()
		}
		select {
		case <-changed:
		case <-timer:
			timer, check = nil, false
			answers = make(chan serverAnswer, 1)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				rv, err := inf.serverResourceVersion(cctx)
				answers <- serverAnswer{rv, err}
			}()
		case <-bounded:
			if applied, _ := inf.rv.get(); applied < target {
				onBound(applied)
			}
		case a := <-answers:
			answers = nil
			if a.err == nil && target > a.rv {
				return fmt.Errorf("informer %s: waiting for %s: the server's current resource version is %d: %w",
					inf.name, waiting, a.rv, ErrFutureResourceVersion)
			}
		case <-ctx.Done():
			return &NotSyncedError{Informer: inf.name, Waiting: waiting, Status: inf.Status(), Cause: ctx.Err()}
		}
	}
}
