package informer

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/listwatch/listwatch/reflector"
)

// ErrStale says that the informer's cache is stale: a call of
// [Informer.Fresh] did not see it reach the server's current resource
// version within Options.FreshnessBound, or found it beyond that version.
// While the informer is stale its Status carries an error wrapping it
// (unless the reflector reports an error of its own, the likelier cause),
// so a [NotSyncedError] from a wait that ends meanwhile wraps it too.
var ErrStale = errors.New("the cache is stale")

// The reasons of a stale cache (Freshness.Reason).
const (
	// StaleBehind: the cache did not reach the server's resource version
	// within Options.FreshnessBound (a stalled or slow watch, a queue
	// the informer applies more slowly than events arrive).
	StaleBehind = "Behind"
	// StaleFutureResourceVersion: the cache was beyond the server's
	// resource version, which the server never issued; Fresh relisted.
	StaleFutureResourceVersion = "FutureResourceVersion"
)

// Freshness is what [Informer.Fresh] calls have learnt of how far the
// cache is behind the server (see Options.FreshnessBound). It is part of
// the informer's Snapshot; Informer.Freshness returns it alone.
type Freshness struct {
	// Stale is set when a Fresh call did not see the cache reach the
	// server's resource version within Options.FreshnessBound, or found
	// the cache beyond it. A later Fresh call that succeeds clears it;
	// nothing else does. Always false when FreshnessBound is zero.
	Stale bool `json:"stale,omitempty"`
	// Reason says why, while Stale: StaleBehind or
	// StaleFutureResourceVersion.
	Reason string `json:"staleReason,omitempty"`
	// ServerResourceVersion is the highest resource version of the
	// server that a Fresh call learnt; "" before the first.
	ServerResourceVersion string `json:"serverResourceVersion,omitempty"`
	// BehindBy is how far the cache's resource version is now behind
	// ServerResourceVersion: 0 once it has reached it. A distance in
	// resource versions, not in objects: a kube-apiserver's resource
	// version counts the writes of every resource.
	BehindBy uint64 `json:"behindBy,omitempty"`
	// LastFresh is when a Fresh call last succeeded; zero before.
	LastFresh time.Time `json:"lastFresh,omitzero"`
}

// freshness is the state behind Freshness, which Fresh calls update.
// Calls may overlap: a call's outcome is taken only when it is not older
// than what is known (its server resource version is compared).
type freshness struct {
	mu sync.Mutex
	// server is the highest server resource version learnt.
	server uint64
	// staleAt is the server resource version of the call that marked the
	// cache stale; 0 while it is not.
	staleAt uint64
	reason  string
	// status is the error Status reports while stale, with its Reason.
	status       error
	statusReason reflector.Reason
	// last is when the last success was, freshAt its server resource
	// version.
	last    time.Time
	freshAt uint64
}

// learnt records a server resource version a Fresh call learnt.
func (f *freshness) learnt(server uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.server = max(f.server, server)
}

// succeeded records that the cache reached server at now: it clears a
// stale mark made for a server resource version not beyond it.
func (f *freshness) succeeded(server uint64, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if server >= f.freshAt {
		f.freshAt, f.last = server, now
	}
	if f.staleAt != 0 && server >= f.staleAt {
		f.staleAt, f.reason, f.status, f.statusReason = 0, "", nil, reflector.ReasonNone
	}
}

// markStale marks the cache stale, unless a call that learnt a later (or
// the same) server resource version has succeeded since.
func (f *freshness) markStale(server uint64, reason string, statusReason reflector.Reason, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if server <= f.freshAt && !f.last.IsZero() {
		return
	}
	f.staleAt, f.reason, f.status, f.statusReason = max(f.staleAt, server, 1), reason, err, statusReason
}

// get returns the Freshness of a cache at resource version applied.
func (f *freshness) get(applied uint64) Freshness {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := Freshness{Stale: f.staleAt != 0, Reason: f.reason, LastFresh: f.last}
	if f.server != 0 {
		out.ServerResourceVersion = strconv.FormatUint(f.server, 10)
		if f.server > applied {
			out.BehindBy = f.server - applied
		}
	}
	return out
}

// statusOf adds the stale mark to st when the reflector reports no error
// of its own.
func (f *freshness) statusOf(st reflector.Status) reflector.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.staleAt != 0 && st.LastError == nil {
		st.Reason, st.LastError = f.statusReason, f.status
	}
	return st
}

// Freshness returns what Fresh calls have learnt of how far the cache is
// behind the server, and whether it is stale (see Options.FreshnessBound).
// It is cheap: a readiness check may call it each time.
func (inf *Informer[T]) Freshness() Freshness { return inf.fresh.get(inf.rv.peek()) }
