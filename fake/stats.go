package fake

import "sync/atomic"

// Stats are counters of a Server's activity since it was created.
type Stats struct {
	// Lists and Watches count calls, including failed ones.
	Lists, Watches int64
	// StreamingWatches counts watches opened with sendInitialEvents=true
	// (client-go's watch-list), included in Watches.
	StreamingWatches int64
	// Events counts committed writes.
	Events int64
	// Faults counts calls failed by Failure or Down.
	Faults int64
	// SlowWatchesClosed counts watches closed because their buffer was full.
	SlowWatchesClosed int64
}

// counters backs Stats.
type counters struct {
	lists, watches, streamingWatches, events, faults, slowWatchesClosed atomic.Int64
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Lists:             s.stats.lists.Load(),
		Watches:           s.stats.watches.Load(),
		StreamingWatches:  s.stats.streamingWatches.Load(),
		Events:            s.stats.events.Load(),
		Faults:            s.stats.faults.Load(),
		SlowWatchesClosed: s.stats.slowWatchesClosed.Load(),
	}
}
