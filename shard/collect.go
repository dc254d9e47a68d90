package shard

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// collectable reports whether a peer's Lease has been expired for longer
// than after at now.
func collectable(p Peer, now time.Time, after time.Duration) bool {
	return !p.Expiry().Add(after).After(now)
}

// collect deletes the ring's Leases that have been expired for longer than
// CollectAfter, if this member is the collector: the owner of slice 0 in
// the last assignment, so that one member does it. A delete carries the
// Lease's uid and resourceVersion as preconditions, so that a Lease renewed
// in the meantime survives.
func (r *runner) collect(ctx context.Context) {
	after := r.m.opts.CollectAfter
	if after < 0 || r.view.cur == nil || r.view.cur.Owner(0) != r.m.opts.Identity {
		return
	}
	ls := r.cached()
	now := r.clock.Now()
	for _, l := range ls {
		p, ok := PeerFromLease(l)
		if !ok || p.Identity == r.m.opts.Identity || !collectable(p, now, after) {
			continue
		}
		uid, rv := l.UID, l.ResourceVersion
		err := r.leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		switch {
		case err == nil:
			r.m.opts.Metrics.Collected()
			r.m.log.V(2).Info("Deleted the Lease of a member gone for long", "lease", l.Name, "expired", p.Expiry())
		case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil:
			r.m.log.V(2).Info("Could not delete a stale Lease", "lease", l.Name, "err", err)
		}
	}
}
