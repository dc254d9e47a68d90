package informer

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/internal/resourceversion"
	"github.com/listwatch/listwatch/reflector"
)

// NotSyncedError says why an informer has not synced, or has not reached a
// resource version, by the time the caller gave up. It wraps the context's
// error and the reflector's last error, so errors.Is(err,
// context.DeadlineExceeded) and apierrors.IsForbidden(err) both work.
type NotSyncedError struct {
	// Informer is the informer's name.
	Informer string
	// Waiting says what for: "initial sync" or "resource version N".
	Waiting string
	// Status is the reflector's state when the wait ended.
	Status reflector.Status
	// Cause is the context's error.
	Cause error
}

func (e *NotSyncedError) Error() string {
	msg := fmt.Sprintf("informer %s: gave up waiting for %s (%v) in phase %s", e.Informer, e.Waiting, e.Cause, e.Status.Phase)
	if e.Status.LastError != nil {
		msg += fmt.Sprintf(": last error (%s, %d failures in a row): %v", e.Status.Reason, e.Status.Failures, e.Status.LastError)
	} else {
		msg += ": no error reported yet"
	}
	return msg
}

func (e *NotSyncedError) Unwrap() []error {
	if e.Status.LastError == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.Status.LastError}
}

// WaitForSync blocks until HasSynced or ctx ends. On failure it returns a
// *NotSyncedError that carries the reason (forbidden, resource not found,
// server errors...) rather than a bare false. An informer that has synced
// returns nil even if ctx has already ended: the answer does not depend on
// which of the two a select happens to pick.
func (inf *Informer[T]) WaitForSync(ctx context.Context) error {
	select {
	case <-inf.synced:
		return nil
	default:
	}
	select {
	case <-inf.synced:
		return nil
	case <-ctx.Done():
		if inf.initialDoneFast.Load() {
			return nil
		}
		return &NotSyncedError{Informer: inf.name, Waiting: "initial sync", Status: inf.Status(), Cause: ctx.Err()}
	}
}

// WaitForQueued blocks until the cache holds everything the reflector has
// handed the informer before the call — its queue is empty and no batch is
// being applied — or until ctx ends. A list the reflector has taken is
// then in the cache even when it carries the resource version the cache
// already had (a relist at the last synced one), which
// WaitForResourceVersion cannot tell apart from the cache before it. An
// informer whose queue never empties (events arrive faster than it applies
// them) waits until ctx ends; after Run has ended it returns an error at
// once.
func (inf *Informer[T]) WaitForQueued(ctx context.Context) error {
	err := inf.fifo.WaitLen(ctx, 0)
	if err != nil && ctx.Err() != nil {
		return &NotSyncedError{Informer: inf.name, Waiting: "its queue to be applied", Status: inf.Status(), Cause: ctx.Err()}
	}
	return err
}

// WaitForResourceVersion blocks until the cache reflects every change up to
// resource version rv — for example the RV a write returned, so that a
// controller reads its own write — or until ctx ends. rv must be numeric, as
// every kube-apiserver resource version is.
//
// A wait that has not ended within a second asks the server once for its
// current resource version, with the request [Informer.Fresh] makes (a
// list with Limit 1 and ResourceVersion "" through the source; none for an
// [Owner] source that does not implement [CurrentResourceVersioner]): an rv
// beyond it was never issued, and the wait ends with an error wrapping
// [ErrFutureResourceVersion] rather than lasting until ctx ends. If that
// request fails, the wait goes on. A wait that ends within the second, as
// a read of one's own write does, makes no request.
//
// The store's resource version is that of the last list, event or bookmark
// applied to it, in order, not the highest ever seen, and an empty or
// non-numeric resource version never counts. A bogus event from the far
// future satisfies a barrier below it, with no request, until the next
// event or bookmark: that one is behind it, which makes the reflector
// relist from a quorum read, and the store then takes the list's resource
// version. While the watch stays quiet after such an event, only asking
// the server tells it from a real one: [Informer.Fresh] does, and relists
// (docs/operations.md, "When the server misbehaves").
func (inf *Informer[T]) WaitForResourceVersion(ctx context.Context, rv string) error {
	target, ok := resourceversion.Parse(rv)
	if !ok {
		return fmt.Errorf("informer %s: resource version %q is not a number", inf.name, rv)
	}
	return inf.waitForRV(ctx, target, "resource version "+rv, true, 0, nil)
}
