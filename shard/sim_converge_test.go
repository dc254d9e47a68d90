package shard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

// The convergence simulation: a ring of 1000 members on a virtual clock
// (milliseconds), each renewing its Lease every RenewInterval plus a random
// delay, each Lease write reaching each other member's watch after its own
// random delay, each member's clock off by a random skew. At a check, every
// observer decides liveness with LiveMembers's rule (renewTime + duration
// after its now) on the writes it has seen; the ring has converged when
// every observer holds the same live set, hence (Assign being a function of
// the set) the same assignment. No server, no goroutine, seeded.

// simParams are the knobs of one convergence run.
type simParams struct {
	members   int   // initial ring size
	observers int   // observers checked at each instant (sampled, or all)
	lease     int64 // LeaseDuration, ms
	renew     int64 // RenewInterval, ms
	jitter    int64 // renewal delay: uniform in [0, jitter] ms
	watch     int64 // watch delay: uniform in [0, watch] ms
	skew      int64 // clock skew: uniform in [-skew, skew] ms
	stallP    float64
	stall     int64 // in the stall phase a renewal is late by this much with probability stallP
}

// simMember is one member's life: when it starts, when it ends and how,
// and the instants (true time) of its Lease writes.
type simMember struct {
	start, end int64 // end = math.MaxInt64 while it never ends
	graceful   bool  // ends by deleting its Lease (else it crashes)
	skew       int64
	writes     []int64
}

// simEvent is a scheduled change of the ring.
type simEvent struct {
	at   int64
	kind string // "leave", "crash", "join"
	who  []int
}

// ringSim is a whole run.
type ringSim struct {
	p       simParams
	seed    uint64
	members []*simMember
	events  []simEvent
	stallOn [2]int64 // the stall phase, [from, to)
	horizon int64
}

// delay is the watch delay of write k of member p to observer o:
// deterministic, uniform in [0, watch].
func (s *ringSim) delay(o, p, k int) int64 {
	return int64(mix(s.seed^uint64(p)<<40^uint64(k+1)<<20^uint64(o)) % uint64(s.p.watch+1))
}

// schedule writes every member's renewals up to the horizon.
func (s *ringSim) schedule(r *rand.Rand) {
	for _, m := range s.members {
		for w := m.start; w < m.end && w < s.horizon; {
			m.writes = append(m.writes, w)
			next := w + s.p.renew + r.Int64N(s.p.jitter+1)
			if w >= s.stallOn[0] && w < s.stallOn[1] && r.Float64() < s.p.stallP {
				next += s.p.stall
			}
			w = next
		}
	}
}

// sees reports whether observer o, at true time t, counts member p live.
// last is the index of p's latest write at or before t (-1: none).
func (s *ringSim) sees(o, p int, last int, t int64) bool {
	m := s.members[p]
	if last < 0 {
		return false
	}
	k := last
	if o != p && m.writes[k]+s.delay(o, p, k) > t {
		k-- // the latest write has not reached o yet
		if k < 0 {
			return false
		}
	}
	if m.graceful && o != p && t >= m.end && m.end+s.delay(o, p, -2) <= t {
		return false // o has seen the Lease deleted
	}
	// The Lease as o sees it, stamped with the writer's clock, judged by
	// Peer.Live (the rule LiveMembers applies) with the observer's clock.
	peer := Peer{Renewed: time.UnixMilli(m.writes[k] + m.skew), Duration: time.Duration(s.p.lease) * time.Millisecond}
	return peer.Live(time.UnixMilli(t + s.members[o].skew))
}

// snapshot holds every sampled observer's view at one instant.
type snapshot struct {
	agree bool
	// views[i] is the live set of observers[i] as a fingerprint.
	views []uint64
	// has reports, per observer, whether it sees member p.
	has func(i, p int) bool
}

// check evaluates the sampled observers at t.
func (s *ringSim) check(t int64, r *rand.Rand) snapshot {
	var live []int
	for i, m := range s.members {
		if m.start+s.p.watch <= t && t < m.end {
			live = append(live, i)
		}
	}
	obs := live
	if s.p.observers < len(live) {
		obs = make([]int, s.p.observers)
		for i, j := range r.Perm(len(live))[:s.p.observers] {
			obs[i] = live[j]
		}
	}
	lastWrite := make([]int, len(s.members))
	for p, m := range s.members {
		lastWrite[p] = sort.Search(len(m.writes), func(i int) bool { return m.writes[i] > t }) - 1
	}
	views := make([]uint64, len(obs))
	for i, o := range obs {
		var fp uint64
		for p := range s.members {
			if s.sees(o, p, lastWrite[p], t) {
				fp += mix(uint64(p) + 1)
			}
		}
		views[i] = fp
	}
	agree := true
	for _, v := range views {
		agree = agree && v == views[0]
	}
	return snapshot{agree: agree, views: views, has: func(i, p int) bool { return s.sees(obs[i], p, lastWrite[p], t) }}
}

// reflects reports how many observers of snap show event e done.
func reflects(snap snapshot, e simEvent) int {
	n := 0
	for i := range snap.views {
		done := true
		for _, p := range e.who {
			if snap.has(i, p) == (e.kind != "join") {
				done = false
				break
			}
		}
		if done {
			n++
		}
	}
	return n
}

func TestSimulationConvergence(t *testing.T) {
	p := simParams{members: 1000, observers: 50, lease: 15000, renew: 5000, jitter: 4000, watch: 1000, skew: 50,
		stallP: 0.001, stall: 12000}
	if *simFull {
		p.observers = math.MaxInt
	}
	r := rand.New(rand.NewPCG(2026, 1117))
	s := &ringSim{p: p, seed: r.Uint64(), horizon: 390_000, stallOn: [2]int64{270_000, 390_000}}
	newMember := func(start int64) int {
		s.members = append(s.members, &simMember{start: start, end: math.MaxInt64, skew: r.Int64N(2*p.skew+1) - p.skew})
		return len(s.members) - 1
	}
	for range p.members {
		newMember(r.Int64N(p.renew)) // first writes spread over one interval
	}
	pick := func(n int) []int {
		var out []int
		for len(out) < n {
			i := r.IntN(len(s.members))
			if i < p.members && s.members[i].end == math.MaxInt64 && !containsInt(out, i) {
				out = append(out, i)
			}
		}
		return out
	}
	at := int64(90_000)
	for _, e := range []struct {
		kind string
		n    int
	}{{"leave", 1}, {"crash", 1}, {"join", 1}, {"crash", 10}, {"leave", 10}, {"join", 10}} {
		ev := simEvent{at: at, kind: e.kind}
		if e.kind == "join" {
			for range e.n {
				ev.who = append(ev.who, newMember(at))
			}
		} else {
			ev.who = pick(e.n)
			for _, i := range ev.who {
				s.members[i].end, s.members[i].graceful = at, e.kind == "leave"
			}
		}
		s.events = append(s.events, ev)
		at += 30_000
	}
	s.schedule(r)

	var report strings.Builder
	fmt.Fprintf(&report, "\n%d members, lease %ds, renew every %ds + U[0,%ds], watch delay U[0,%ds], clock skew ±%dms; %d observers checked\n",
		p.members, p.lease/1000, p.renew/1000, p.jitter/1000, p.watch/1000, p.skew, min(p.observers, len(s.members)))

	// Steady phase: agreement at every second, no event, normal delays.
	steady := func(from, to int64) (agreed, checks int) {
		for t := from; t < to; t += 1000 {
			checks++
			if s.check(t, r).agree {
				agreed++
			}
		}
		return agreed, checks
	}
	agreed, checks := steady(30_000, 90_000)
	// Agreeing on the live set is agreeing on the assignment: Assign over
	// two observers' sets at one instant gives equal tables.
	liveSet := func(o int, t int64) []string {
		var out []string
		for p := range s.members {
			last := sort.Search(len(s.members[p].writes), func(i int) bool { return s.members[p].writes[i] > t }) - 1
			if s.sees(o, p, last, t) {
				out = append(out, fmt.Sprintf("member-%d", p))
			}
		}
		return out
	}
	a0 := MustAssign(liveSet(0, 60_000), Options{})
	if a1 := MustAssign(liveSet(p.members-1, 60_000), Options{}); !a0.Equal(a1) || len(a0.Members()) != p.members {
		t.Errorf("two observers at 60s: %v and %v", a0, a1)
	}
	fmt.Fprintf(&report, "steady, renewal delays within the lease's margin: all agree at %d of %d checks\n", agreed, checks)
	if agreed != checks {
		t.Errorf("steady ring disagreed at %d of %d checks", checks-agreed, checks)
	}

	// Events: from the event, 100 ms checks until every observer shows it.
	fmt.Fprintf(&report, "| event | first observer shows it | all observers show it and agree | disagreement window |\n| --- | --- | --- | --- |\n")
	for _, e := range s.events {
		first, last := int64(-1), int64(-1)
		for t := e.at; t < e.at+60_000; t += 100 {
			snap := s.check(t, r)
			n := reflects(snap, e)
			if n > 0 && first < 0 {
				first = t
			}
			if n == len(snap.views) && snap.agree {
				last = t
				break
			}
		}
		if last < 0 {
			t.Errorf("%s of %d at %ds: no convergence within 60s", e.kind, len(e.who), e.at/1000)
			continue
		}
		fmt.Fprintf(&report, "| %s ×%d | +%.1fs | +%.1fs | %.1fs |\n", e.kind, len(e.who),
			float64(first-e.at)/1000, float64(last-e.at)/1000, float64(last-first)/1000)
		bound := p.watch + 100 // a join or a graceful leave: one watch delay
		if e.kind == "crash" {
			bound = p.lease + 2*p.skew + p.watch + 100 // the last renewal runs out
		}
		if last-e.at > bound {
			t.Errorf("%s ×%d converged after %dms, bound %dms", e.kind, len(e.who), last-e.at, bound)
		}
	}

	// Stall phase: some renewals come later than the lease allows, so the
	// member drops out when its Lease runs out and comes back with its next
	// write. Each lapse is a crash and a join; both must converge like one.
	agreed, checks = steady(s.stallOn[0], s.stallOn[1])
	var outs, backs []float64
	for p0, m := range s.members {
		for k := 1; k < len(m.writes); k++ {
			if m.writes[k]-m.writes[k-1] < p.lease {
				continue
			}
			expiry := m.writes[k-1] + m.skew + p.lease // in the writer's clock
			for _, ev := range []simEvent{{at: expiry - 2*p.skew, kind: "crash", who: []int{p0}}, {at: m.writes[k], kind: "join", who: []int{p0}}} {
				took := int64(-1)
				for t := ev.at; t < ev.at+10_000; t += 100 {
					if snap := s.check(t, r); reflects(snap, ev) == len(snap.views) {
						took = t - ev.at
						break
					}
				}
				if took < 0 {
					t.Errorf("member %d's lapse at %dms: %s not seen by all within 10s", p0, m.writes[k-1], ev.kind)
					continue
				}
				if ev.kind == "crash" {
					outs = append(outs, float64(took))
				} else {
					backs = append(backs, float64(took))
				}
			}
		}
	}
	so, sb := statsOf(outs), statsOf(backs)
	fmt.Fprintf(&report, "stalls (%.1f%% of renewals %ds late, %ds): %d lapsed Leases, each 2 reassignments; "+
		"all observers drop the member within %.1fs of its expiry (max), take it back within %.1fs of its next write (max); "+
		"all agree at %d of %d checks\n", p.stallP*100, p.stall/1000, (s.stallOn[1]-s.stallOn[0])/1000,
		len(outs), so.max/1000, sb.max/1000, agreed, checks)
	if so.max > float64(4*p.skew+100) || sb.max > float64(p.watch+100) {
		t.Errorf("lapses converge slowly: out %.0fms, back %.0fms", so.max, sb.max)
	}
	t.Log(report.String())
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
