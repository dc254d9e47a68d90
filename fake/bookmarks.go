package fake

import (
	"time"

	"k8s.io/utils/clock"
)

// preTimeoutBookmarks is how long before a watch's timeoutSeconds deadline
// the watch cache starts sending it bookmarks; from then on it sends one
// about every preTimeoutBookmarkPeriod until the deadline.
const (
	preTimeoutBookmarks      = 2 * time.Second
	preTimeoutBookmarkPeriod = time.Second
)

// bookmarkSchedule times the bookmarks of one watch that allowed them, as
// kube-apiserver's watch cache does: every Options.BookmarkInterval, and, for
// a watch with timeoutSeconds, from 2 s before its deadline on, once a second
// (a 3 s watch gets bookmarks at 1 s and 2 s). A watch whose deadline is 2 s
// away or less when it opens gets no pre-deadline bookmarks, as the watch
// cache does not schedule a bookmark time already past. No bookmark is
// scheduled at or after the deadline. Used only by the watch's goroutine.
type bookmarkSchedule struct {
	// clk and interval are fixed; deadline is zero without timeoutSeconds.
	clk      clock.Clock
	interval time.Duration
	deadline time.Time
	// timer fires at the next bookmark; nil when none is due (bookmarks
	// not allowed, or only the deadline is left).
	timer clock.Timer
}

// newBookmarkSchedule starts w's schedule at now; it is inert if w did not
// allow bookmarks.
func (w *watcher) newBookmarkSchedule(now time.Time) *bookmarkSchedule {
	b := &bookmarkSchedule{clk: w.srv.clock, interval: w.srv.opts.BookmarkInterval}
	if !w.bookmarks {
		return b
	}
	if w.timeout > 0 {
		b.deadline = now.Add(w.timeout)
		if !b.deadline.Add(-preTimeoutBookmarks).After(now) {
			return b // too short for a pre-deadline bookmark
		}
	}
	b.next(now)
	return b
}

// delay is how long after now the next bookmark falls; 0 means none.
func (b *bookmarkSchedule) delay(now time.Time) time.Duration {
	d := b.interval
	if b.deadline.IsZero() {
		return d
	}
	if pre := b.deadline.Add(-preTimeoutBookmarks).Sub(now); pre > 0 {
		d = min(d, pre)
	} else {
		d = min(d, preTimeoutBookmarkPeriod)
	}
	if !now.Add(d).Before(b.deadline) {
		return 0
	}
	return d
}

// next schedules the bookmark after the one due at now.
func (b *bookmarkSchedule) next(now time.Time) {
	d := b.delay(now)
	switch {
	case d == 0:
		b.stop()
		b.timer = nil
	case b.timer == nil:
		b.timer = b.clk.NewTimer(d)
	default:
		b.timer.Reset(d)
	}
}

// c is the channel of the next bookmark; nil (never ready) when none is due.
func (b *bookmarkSchedule) c() <-chan time.Time {
	if b.timer == nil {
		return nil
	}
	return b.timer.C()
}

func (b *bookmarkSchedule) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
}
