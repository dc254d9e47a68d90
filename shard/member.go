package shard

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/reflector"
)

// releaseTimeout bounds the deletion of the member's Lease as Run ends.
const releaseTimeout = 5 * time.Second

// Member is one replica's place in a ring: it holds and renews its own
// Lease, watches the ring's Leases, and publishes the assignment of slices
// to the live members whenever the set of live members changes. The
// liveness decisions and the assignment are the pure [LiveMembers] and
// [Assign]; Member only moves Leases in and out.
type Member struct {
	// opts are the resolved options; read-only after NewMember.
	opts resolved
	// log is the logger of the context given to NewMember.
	log logr.Logger
	// ran turns true when Run starts; Run runs once.
	ran atomic.Bool
	// current is the last assignment published; nil before the first.
	current atomic.Pointer[Assignment]

	// mu guards status.
	mu sync.Mutex
	// status is what Status reports, updated by Run's goroutine.
	status Status
}

// Status is a snapshot of a Member.
type Status struct {
	// Identity is the member's name in the ring.
	Identity string
	// Lease is the name of the member's Lease.
	Lease string
	// Renewed is the renewTime of the member's last successful write of its
	// Lease; zero before the first.
	Renewed time.Time
	// RenewError is the error of the last write if it failed, else nil.
	RenewError error
	// Synced reports whether the ring's Leases have been listed, so that
	// an assignment has been published.
	Synced bool
	// Members are the live members of the last assignment, sorted.
	Members []string
	// Owned is how many slices the member owns in it.
	Owned int
	// Withheld is how many of those it does not hand out yet: with
	// MemberOptions.Fenced, the handovers in progress (slices gained whose
	// previous holder has not released them). Always 0 without fencing,
	// where Agreed false tells that a handover is in progress.
	Withheld int
	// Conflicts are live members whose Lease announces a different slice
	// count: the ring is misconfigured and its replicas disagree on owners.
	Conflicts []string
	// Fingerprint is the last assignment's Assignment.Fingerprint; empty
	// before the first.
	Fingerprint string
	// Agreed reports whether every other live member announces the same
	// fingerprint on its Lease: the ring has converged. Members announce
	// at their renewals, so it lags a change by up to RenewInterval.
	Agreed bool
}

// NewMember checks opts and returns a Member; Run joins the ring. ctx
// carries the logger (klog.FromContext); NewMember starts nothing.
func NewMember(ctx context.Context, opts MemberOptions) (*Member, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	m := &Member{opts: o, log: klog.FromContext(ctx).WithValues("ring", o.Ring, "member", o.Identity)}
	m.status = Status{Identity: o.Identity, Lease: o.leaseName}
	return m, nil
}

// Identity is the member's name in the ring.
func (m *Member) Identity() string { return m.opts.Identity }

// Ring is the name of the member's ring.
func (m *Member) Ring() string { return m.opts.Ring }

// Assignment is the last assignment published, nil before the first (Run
// publishes once the ring's Leases are listed).
func (m *Member) Assignment() *Assignment { return m.current.Load() }

// Status reports the member's state.
func (m *Member) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.status
	s.Members = append([]string(nil), s.Members...)
	s.Conflicts = append([]string(nil), s.Conflicts...)
	return s
}

// Run joins the ring and stays in it until ctx ends: it writes its Lease,
// renews it every RenewInterval, watches the ring's Leases and calls
// OnChange with each new assignment. When ctx ends it publishes a last
// Change without itself, deletes its Lease (so that the others take over
// its slices at once rather than after LeaseDuration) and returns nil once
// every goroutine it started has stopped. API errors are logged, reported
// by Status and retried at the next renewal; they do not end Run. Run may
// be called only once.
func (m *Member) Run(ctx context.Context) error {
	if !m.ran.CompareAndSwap(false, true) {
		return errors.New("shard: Member.Run called twice")
	}
	r := &runner{m: m, clock: m.opts.Clock, view: view{self: m.opts.Identity, slices: m.opts.Slices,
		fenced: m.opts.Fenced, margin: m.opts.SkewMargin, settle: m.opts.JoinWindow}}
	r.leases = m.opts.Client.CoordinationV1().Leases(m.opts.Namespace)

	// The ring's Leases, through listwatch's own informer (paginated
	// lists: a ring's Leases are few, and client-go's fake clientset, which
	// tests use, cannot stream).
	f := factory.New(factory.Options{})
	inf, err := factory.Typed[*coordinationv1.Lease, *coordinationv1.LeaseList](f, "leases",
		factory.Selection{Namespace: m.opts.Namespace, LabelSelector: labels.Set{RingLabel: m.opts.Ring}.String()},
		func(ns string) reflector.Client[*coordinationv1.LeaseList] {
			return m.opts.Client.CoordinationV1().Leases(ns)
		},
		informer.Options[*coordinationv1.Lease]{
			Name:      "shard-leases-" + m.opts.Ring,
			Reflector: reflector.Config[*coordinationv1.Lease]{WatchList: reflector.WatchListOff},
		})
	if err != nil {
		return err
	}
	r.cached = inf.Reader().List
	poke := make(chan struct{}, 1)
	r.ho = newHandover(func() { signal(poke) })
	wake := func(*coordinationv1.Lease) { signal(poke) }
	if _, err := inf.AddHandler(informer.HandlerFuncs[*coordinationv1.Lease]{
		AddFunc:    func(l *coordinationv1.Lease, _ bool) { wake(l) },
		UpdateFunc: func(_, l *coordinationv1.Lease) { wake(l) },
		DeleteFunc: func(l *coordinationv1.Lease, _ bool) { wake(l) },
	}, informer.HandlerOptions{}); err != nil {
		return err
	}
	informerCtx, stopInformer := context.WithCancel(ctx)
	f.Start(informerCtx)
	defer f.Shutdown()
	defer stopInformer()
	synced := make(chan struct{})
	go func() {
		if inf.WaitForSync(informerCtx) == nil {
			close(synced)
		}
	}()

	r.loop(ctx, poke, synced)
	return nil
}

// signal wakes the loop without blocking; one pending wake is enough.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// setStatus applies f to the status under the lock.
func (m *Member) setStatus(f func(*Status)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.status)
}

// leaseOf is a fresh Lease object for the member.
func (m *Member) leaseOf() *coordinationv1.Lease {
	l := &coordinationv1.Lease{}
	l.Name = m.opts.leaseName
	l.Namespace = m.opts.Namespace
	return l
}
