package shard

import (
	"context"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// runner is the state of one Run, touched only by Run's goroutine.
type runner struct {
	// m is the Member being run; its opts are resolved.
	m *Member
	// clock is m.opts.Clock, never nil.
	clock clock.WithTicker
	// leases writes the Leases of the ring's namespace.
	leases coordinationclient.LeaseInterface
	// cached lists the Lease informer's cache: the ring's Leases only.
	cached func() []*coordinationv1.Lease
	// view turns peers into Changes.
	view view
	// lease is our Lease as last written (for the next Update), nil when
	// unknown: the next renewal reads it first.
	lease *coordinationv1.Lease
	// announced is the assignment fingerprint of our last successful
	// write; a fenced member writes again as soon as it differs from its
	// current assignment's, since the new owners of the slices it lost
	// wait for that announcement.
	announced string
	// ho is the handover between the member's Sources and its ring.
	ho *handover
	// listed is the ListedAnnotation of our last successful write.
	listed string
	// self is our own Peer as last written; Identity empty before the
	// first successful write. It stands for our Lease in the peers, so
	// that a slow watch never makes us doubt ourselves.
	self Peer
}

// loop renews and evaluates until ctx ends, then leaves the ring. synced is
// closed once the Lease informer has delivered its first list.
func (r *runner) loop(ctx context.Context, poke <-chan struct{}, synced <-chan struct{}) {
	ticker := r.clock.NewTicker(r.m.opts.RenewInterval)
	defer ticker.Stop()
	var expiry clock.Timer
	defer func() {
		if expiry != nil {
			expiry.Stop()
		}
	}()
	r.renew(ctx)
	for {
		var expired <-chan time.Time
		if synced == nil {
			next := r.evaluate()
			if r.view.cur != nil && (r.view.fenced && r.view.cur.Fingerprint() != r.announced || r.announced == "" ||
				r.listed != r.ho.announcement(r.view.cur.Fingerprint())) {
				// Fenced members announce every assignment at once; every
				// member announces its first at once, so that a joiner
				// finds the ring established (view.settling), and what its
				// Sources have listed, for which the members that lost
				// those slices wait.
				r.renew(ctx)
			}
			if expiry != nil {
				expiry.Stop()
				expiry = nil
			}
			if !next.IsZero() {
				expiry = r.clock.NewTimer(next.Sub(r.clock.Now()))
				expired = expiry.C()
			}
		}
		select {
		case <-ctx.Done():
			r.leave(ctx)
			return
		case <-ticker.C():
			r.renew(ctx)
			r.collect(ctx)
		case <-poke:
		case <-synced:
			synced = nil
			r.m.setStatus(func(s *Status) { s.Synced = true })
		case <-expired:
		}
	}
}

// peers reads the ring's Leases from the informer's cache, our own replaced
// by what we last wrote.
func (r *runner) peers() []Peer {
	ls := r.cached()
	out := make([]Peer, 0, len(ls)+1)
	listings := make(map[string]listing, len(ls))
	for _, l := range ls {
		if id, li, ok := listingOf(l); ok && id != r.m.opts.Identity {
			listings[id] = li
		}
		if p, ok := PeerFromLease(l); ok && p.Identity != r.self.Identity && p.Identity != r.m.opts.Identity {
			out = append(out, p)
		}
	}
	if r.self.Identity != "" {
		out = append(out, r.self)
	}
	r.ho.setPeers(listings)
	return out
}

// evaluate publishes the assignment if the live members changed and
// returns when to look again (zero: only on a Lease event).
func (r *runner) evaluate() time.Time {
	now := r.clock.Now()
	peers := r.peers()
	c, changed, next := r.view.observe(peers, now)
	conflicts := r.view.conflicts(peers, now)
	if changed {
		r.publish(c)
	}
	agreed, fp := r.view.agreed(peers, now), ""
	if r.view.cur != nil { // nil while the ring settles
		fp = r.view.cur.Fingerprint()
	}
	r.m.setStatus(func(s *Status) { s.Conflicts, s.Agreed, s.Fingerprint = conflicts, agreed, fp })
	return next
}

// publish records c and hands it to OnChange.
func (r *runner) publish(c Change) {
	c.ring = r.ho
	r.m.current.Store(c.Assignment)
	owned := len(c.Assignment.Owned(r.m.opts.Identity))
	r.m.setStatus(func(s *Status) {
		s.Members, s.Owned, s.Withheld = c.Assignment.Members(), owned, len(c.Withheld)
	})
	r.m.opts.Metrics.Assignment(len(c.Assignment.members), owned)
	r.m.opts.Metrics.Withheld(len(c.Withheld))
	r.m.opts.Metrics.Reassigned(len(c.Gained), len(c.Lost))
	r.m.log.V(2).Info("Ring assignment changed", "members", len(c.Assignment.members),
		"owned", owned, "gained", len(c.Gained), "lost", len(c.Lost))
	if r.m.opts.OnChange != nil {
		r.m.opts.OnChange(c)
	}
}

// spec is our Lease's spec renewed at now.
func (r *runner) spec(now time.Time, acquired *metav1.MicroTime) coordinationv1.LeaseSpec {
	t := metav1.NewMicroTime(now)
	if acquired == nil {
		acquired = &t
	}
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(r.m.opts.Identity),
		LeaseDurationSeconds: ptr.To(int32(r.m.opts.LeaseDuration / time.Second)),
		AcquireTime:          acquired,
		RenewTime:            &t,
	}
}

// renew writes our Lease with renewTime now: an update of the copy we hold,
// or, when we hold none (first write, or the last one failed), a create, or
// a take-over of a Lease of our name left by an earlier incarnation.
func (r *runner) renew(ctx context.Context) {
	now := r.clock.Now()
	var (
		written *coordinationv1.Lease
		err     error
	)
	if r.lease != nil {
		l := r.lease.DeepCopy()
		r.label(l)
		l.Spec = r.spec(now, l.Spec.AcquireTime)
		written, err = r.leases.Update(ctx, l, metav1.UpdateOptions{})
	} else {
		var found *coordinationv1.Lease
		found, err = r.leases.Get(ctx, r.m.opts.leaseName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			l := r.m.leaseOf()
			r.label(l)
			l.Spec = r.spec(now, nil)
			written, err = r.leases.Create(ctx, l, metav1.CreateOptions{})
		case err == nil:
			l := found.DeepCopy()
			r.label(l)
			l.Spec = r.spec(now, nil)
			written, err = r.leases.Update(ctx, l, metav1.UpdateOptions{})
		}
	}
	r.m.opts.Metrics.Renewal(err == nil)
	if err != nil {
		if ctx.Err() == nil {
			// Unknown state: read the Lease before the next write. (A
			// write cut short by the end of Run keeps the copy, so that
			// leave still deletes the Lease: its uid has not changed.)
			r.lease = nil
			r.m.log.Error(err, "Renewing the member's Lease", "lease", r.m.opts.leaseName)
		}
		r.m.setStatus(func(s *Status) { s.RenewError = err })
		return
	}
	r.lease = written
	r.announced = written.Annotations[AssignmentAnnotation]
	r.listed = written.Annotations[ListedAnnotation]
	r.self = Peer{Identity: r.m.opts.Identity, Renewed: now, Duration: r.m.opts.LeaseDuration, Slices: r.m.opts.Slices}
	r.m.setStatus(func(s *Status) { s.Renewed, s.RenewError = now, nil })
}

// label puts the ring's label, our slice count and the fingerprint of our
// last assignment on l.
func (r *runner) label(l *coordinationv1.Lease) {
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[RingLabel] = r.m.opts.Ring
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[SlicesAnnotation] = strconv.Itoa(r.m.opts.Slices)
	if r.view.cur != nil {
		l.Annotations[AssignmentAnnotation] = r.view.cur.Fingerprint()
		if a := r.ho.announcement(r.view.cur.Fingerprint()); a != "" {
			l.Annotations[ListedAnnotation] = a
		} else {
			delete(l.Annotations, ListedAnnotation)
		}
	}
}

// leave publishes a last Change without us, then deletes our Lease (only
// the incarnation we wrote: a precondition on its uid).
func (r *runner) leave(ctx context.Context) {
	if c, ok := r.view.leaving(); ok {
		r.publish(c)
	}
	if r.lease == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	uid := r.lease.UID
	err := r.leases.Delete(rctx, r.m.opts.leaseName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		r.m.log.Error(err, "Releasing the member's Lease; it lapses after its duration", "lease", r.m.opts.leaseName)
	}
	r.lease = nil
}
