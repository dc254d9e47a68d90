package shard

import (
	"slices"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// The Lease of a ring member carries these (see docs/sharding.md).
const (
	// RingLabel is the label whose value names the ring a Lease belongs to.
	RingLabel = "listwatch.io/ring"
	// SlicesAnnotation holds the member's slice count, so that replicas
	// configured differently are noticed (Status.Conflicts).
	SlicesAnnotation = "listwatch.io/slices"
	// AssignmentAnnotation holds the Fingerprint of the assignment the
	// member last published, written at its renewals.
	AssignmentAnnotation = "listwatch.io/assignment"
)

// Peer is one ring member as its Lease shows it. The pure half of
// membership: Member reads Leases into Peers, LiveMembers decides.
type Peer struct {
	// Identity is the Lease's holderIdentity, never empty.
	Identity string
	// Renewed is the Lease's renewTime.
	Renewed time.Time
	// Duration is the Lease's leaseDurationSeconds, > 0.
	Duration time.Duration
	// Slices is the member's slice count from SlicesAnnotation, 0 when
	// absent or malformed.
	Slices int
	// Assignment is the Fingerprint the member announces
	// (AssignmentAnnotation); empty when absent.
	Assignment string
}

// Expiry is the instant from which the member no longer counts:
// Renewed + Duration.
func (p Peer) Expiry() time.Time { return p.Renewed.Add(p.Duration) }

// Live reports whether the Lease is in force at now: its expiry is after
// now. Every replica decides with its own clock on the same renewTime, so
// replicas agree as far as their clocks agree (docs/sharding.md, "Clock
// skew").
func (p Peer) Live(now time.Time) bool { return p.Expiry().After(now) }

// PeerFromLease reads a ring member from its Lease; ok is false for a
// Lease that names no holder, no renewal or no positive duration (a
// released or half-written Lease), which never counts as live.
func PeerFromLease(l *coordinationv1.Lease) (p Peer, ok bool) {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil ||
		s.LeaseDurationSeconds == nil || *s.LeaseDurationSeconds <= 0 {
		return Peer{}, false
	}
	p = Peer{
		Identity: *s.HolderIdentity,
		Renewed:  s.RenewTime.Time,
		Duration: time.Duration(*s.LeaseDurationSeconds) * time.Second,
	}
	if n, err := strconv.Atoi(l.Annotations[SlicesAnnotation]); err == nil && n > 0 {
		p.Slices = n
	}
	p.Assignment = l.Annotations[AssignmentAnnotation]
	return p, true
}

// LiveMembers returns the identities of the peers live at now, sorted and
// without duplicates, and the next instant after now at which that set
// would change if no Lease were renewed (the earliest expiry among them;
// the zero time when none is live). A caller re-evaluates then, or sooner
// when a Lease changes.
func LiveMembers(peers []Peer, now time.Time) (live []string, next time.Time) {
	for _, p := range peers {
		if !p.Live(now) {
			continue
		}
		live = append(live, p.Identity)
		if e := p.Expiry(); next.IsZero() || e.Before(next) {
			next = e
		}
	}
	slices.Sort(live)
	return slices.Compact(live), next
}
