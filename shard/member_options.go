package shard

import (
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// Defaults of MemberOptions.
const (
	// DefaultLeaseDuration is how long a member counts after its last
	// renewal: client-go leader election's usual 15 s.
	DefaultLeaseDuration = 15 * time.Second
	// DefaultSkewMargin is the default MemberOptions.SkewMargin.
	DefaultSkewMargin = time.Second
	// defaultRenewFraction: a member renews every LeaseDuration/3 by
	// default, so two renewals can fail before its Lease lapses.
	defaultRenewFraction = 3
)

// MemberOptions configures NewMember.
type MemberOptions struct {
	// Client talks to the API server; required.
	Client kubernetes.Interface
	// Namespace holds the ring's Leases; required.
	Namespace string
	// Ring names the ring: the value of RingLabel on its Leases, so a
	// valid label value; required. Replicas that share a ring name share
	// the resource between them.
	Ring string
	// Identity names this member in the ring and in its Lease's
	// holderIdentity. Empty means the POD_NAME environment variable, or
	// else the host name. Two live replicas must never share one.
	Identity string
	// Slices is the number of slices of the hash space; 0 means
	// DefaultSlices. Every member of a ring must use the same value.
	Slices int
	// LeaseDuration is how long the member counts after each renewal; 0
	// means DefaultLeaseDuration. Rounded down to whole seconds, at least 1.
	LeaseDuration time.Duration
	// RenewInterval is the time between renewals; 0 means LeaseDuration/3.
	// It must be below LeaseDuration.
	RenewInterval time.Duration
	// CollectAfter is how long a ring member's Lease must have been expired
	// before the ring deletes it (a crashed replica that never came back
	// leaves one; a graceful one deletes its own). Only the owner of slice
	// 0 collects, at its renewals. 0 means 10 × LeaseDuration; negative
	// never collects. A replica that comes back after its Lease was
	// collected simply creates a new one.
	CollectAfter time.Duration
	// Fenced chooses "at most one owner at a time" over the default "never
	// unowned" for handovers: a slice the member gains is withheld
	// (Change.Withheld; Change.Handed, Matcher and Selector leave it out)
	// until every other member whose Lease is in force announces on it an
	// assignment in which it does not own the slice, or that Lease has
	// been expired for SkewMargin; a later Change hands it out. The member
	// announces each new assignment at once (an extra Lease write per
	// change) rather than at its next renewal. The price is a gap instead
	// of an overlap: see docs/sharding.md, "Handover". Every member of a
	// ring must set it for the guarantee to hold.
	Fenced bool
	// SkewMargin is, with Fenced, how long after a peer's Lease expiry the
	// member still assumes the peer may hand out its slices: the largest
	// clock difference between replicas it tolerates. 0 means
	// DefaultSkewMargin; negative means none.
	SkewMargin time.Duration
	// JoinWindow is how long a starting member waits for the ring to
	// settle before its first assignment: until the live members have
	// stayed the same for that long. Replicas started together would
	// otherwise each see a ring of themselves alone for a moment, claim
	// every slice and list everything. A member that finds a live peer
	// announcing an assignment (an established ring, which takes it in at
	// once) does not wait. 0 means RenewInterval (Leases of replicas
	// started within one renewal of each other are seen); negative means
	// no wait. The cost is a first list later by up to the window after
	// the last of them started (docs/sharding.md, "Membership").
	JoinWindow time.Duration
	// Metrics receives the member's figures; nil means NoopMemberMetrics.
	Metrics MemberMetrics
	// Clock is the source of time for renewals and liveness; nil means the
	// real clock.
	Clock clock.WithTicker
	// OnChange, if set, is called with every change of the ring's
	// assignment, in order, on the member's goroutine: it must not block
	// for long (a renewal waits for it). The last call, as Run ends, has
	// the member gone from the assignment and every slice Lost; it returns
	// before the member's Lease is released.
	OnChange func(Change)
}

// resolved is MemberOptions with every default applied and checked.
type resolved struct {
	MemberOptions
	// leaseName is <Ring>-<Identity>, a valid object name.
	leaseName string
}

func (o MemberOptions) resolve() (resolved, error) {
	var errs []error
	if o.Client == nil {
		errs = append(errs, errors.New("missing Client"))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("missing Namespace"))
	}
	if o.Ring == "" {
		errs = append(errs, errors.New("missing Ring"))
	} else if msgs := validation.IsValidLabelValue(o.Ring); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("ring %q is not a label value: %v", o.Ring, msgs))
	}
	if o.Identity == "" {
		o.Identity = os.Getenv("POD_NAME")
	}
	if o.Identity == "" {
		h, err := os.Hostname()
		if err != nil {
			errs = append(errs, fmt.Errorf("no Identity, no POD_NAME and no host name: %w", err))
		}
		o.Identity = h
	}
	n, err := checkSlices(o.Slices)
	if err != nil {
		errs = append(errs, err)
	}
	o.Slices = n
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	o.LeaseDuration = o.LeaseDuration.Truncate(time.Second)
	if o.LeaseDuration < time.Second {
		errs = append(errs, fmt.Errorf("LeaseDuration %v is under a second", o.LeaseDuration))
	}
	if o.RenewInterval == 0 {
		o.RenewInterval = o.LeaseDuration / defaultRenewFraction
	}
	if o.RenewInterval <= 0 || o.RenewInterval >= o.LeaseDuration {
		errs = append(errs, fmt.Errorf("RenewInterval %v is not in (0, LeaseDuration %v)", o.RenewInterval, o.LeaseDuration))
	}
	switch {
	case o.JoinWindow == 0:
		o.JoinWindow = o.RenewInterval
	case o.JoinWindow < 0:
		o.JoinWindow = 0
	}
	switch {
	case o.SkewMargin == 0:
		o.SkewMargin = DefaultSkewMargin
	case o.SkewMargin < 0:
		o.SkewMargin = 0
	}
	if o.CollectAfter == 0 {
		o.CollectAfter = 10 * o.LeaseDuration
	}
	if o.Metrics == nil {
		o.Metrics = NoopMemberMetrics{}
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	name := o.Ring + "-" + o.Identity
	if o.Identity != "" && o.Ring != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("lease name %q (ring-identity) is not valid: %v", name, msgs))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return resolved{}, fmt.Errorf("shard: %w", err)
	}
	return resolved{MemberOptions: o, leaseName: name}, nil
}
