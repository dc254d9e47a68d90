package crcache

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/store"
)

// Fresh is informer.Informer.Fresh for the informer c, a cache from New or
// NewWithOptions, holds for obj's type (typed, unstructured or
// metadata-only, as for GetInformer): it asks the server for its current
// resource version in that informer's scope (one list of at most one
// object, from a quorum read) and returns nil once the informer's cache
// has reached it, so that c's Get and List of that type reflect every
// write acknowledged before the call. Call it before a disruptive action
// decided from the cache, and hold the action while it fails
// (docs/operations.md, "Freshness"). It gets the informer as c.GetInformer
// does, so an informer not yet there is made and, once c has started,
// waited for.
//
// Errors are informer.Fresh's (the request's error, wrapped; a
// *informer.NotSyncedError when ctx ends first; an error wrapping
// informer.ErrFutureResourceVersion when the cache was beyond the server,
// which relists it), and one wrapping informer.ErrFreshnessUnknown for an
// informer that is not listwatch's (cache.Options.NewInformer) or that is
// sharded (Options.Shard): client-go's ListerWatcher adapter hides its
// shard.Source from the informer, and a list through the source would
// start a list cycle. It never reports fresh what it could not check.
func Fresh(ctx context.Context, c cache.Cache, obj client.Object) error {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	if _, sharded := inf.(*shardedInformer); sharded {
		return fmt.Errorf("crcache: the informer of %T is sharded, and cannot be asked for the server's resource version yet: %w",
			obj, informer.ErrFreshnessUnknown)
	}
	lw, ok := inf.(interface {
		Informer() *informer.Informer[store.Object]
	})
	if !ok {
		return fmt.Errorf("crcache: the informer of %T (%T) is not listwatch's: %w", obj, inf, informer.ErrFreshnessUnknown)
	}
	return lw.Informer().Fresh(ctx)
}
