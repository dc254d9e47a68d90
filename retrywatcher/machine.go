package retrywatcher

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/objname"
	"github.com/listwatch/listwatch/reflector"
)

// Phase is where the Machine stands. The set is closed:
//
//   - PhaseNew: constructed. Start → PhaseOpening, or PhaseListing in relist
//     mode without a resource version.
//   - PhaseOpening: OpenWatch emitted. WatchOpened → PhaseWatching;
//     WatchFailed → PhaseWaiting (retryable), PhaseListing (410 in relist
//     mode) or PhaseStopped.
//   - PhaseWatching: events flow. A stale event, and a bookmark with a
//     malformed resource version, are dropped; ERROR events and a closed
//     stream (WatchClosed) lead where WatchFailed does, except that a
//     stream that delivered an event, or stayed open for at least
//     Backoff.Max, reopens at once (→ PhaseOpening).
//   - PhaseWaiting: Wait emitted; Deadline is its end. A Tick at or after
//     it → PhaseOpening, or PhaseListing if the wait was before a list.
//   - PhaseListing: List emitted (relist mode only). Listed → PhaseOpening
//     after delivering the differences; ListFailed → PhaseWaiting or
//     PhaseStopped.
//   - PhaseStopped: terminal; every input is ignored.
type Phase int

const (
	PhaseNew Phase = iota
	PhaseOpening
	PhaseWatching
	PhaseWaiting
	PhaseListing
	PhaseStopped
)

var phaseNames = [...]string{"new", "opening", "watching", "waiting", "listing", "stopped"}

func (p Phase) String() string { return phaseNames[p] }

// Config configures a Machine.
type Config struct {
	// ResourceVersion is where the first watch starts: a positive decimal
	// integer, as kube-apiserver issues. It may be empty only in relist
	// mode, where the machine then lists first.
	ResourceVersion string
	// Relist turns on relist mode: a 410 leads to a quorum list whose
	// differences from what was delivered become synthetic events.
	Relist bool
	// Known, in relist mode, is what the consumer already holds at
	// ResourceVersion (usually the items of the list it came from).
	Known []runtime.Object
	// Backoff paces retries that made no progress.
	Backoff reflector.Backoff
	// Rand is the source of jitter. Default: a PCG seeded at random. Inject
	// a seeded source for deterministic runs.
	Rand *rand.Rand
}

// Machine decides what a RetryWatcher does, in the shape of
// [reflector.Machine]: it has no goroutines, channels or clock. Start and
// Step take the current time (and Step one Input) and return the effects
// to run, in order; Deadline says when it wants a Tick. Randomness
// (jitter) comes from Config.Rand, so the same inputs at the same times
// with the same seed always give the same effects. A Machine is not safe
// for concurrent use. Each returned slice is the caller's.
type Machine struct {
	phase Phase
	// now is the time given to the Step in progress.
	now time.Time
	// lastRV is the RV of the last delivered event or bookmark (initially the
	// configured one; "" only in relist mode before the first list). Every
	// later event must be newer to be delivered.
	lastRV string
	// lastNum is lastRV as a number (0 while lastRV is "").
	lastNum uint64
	// failures counts consecutive attempts that made no progress; it sets
	// the next backoff and is reset by a delivered event, a list, or a
	// stream that stayed open for at least the backoff's cap (Max); it
	// starts again at 1 when Backoff.ResetAfter is set and the last
	// failure, at lastFail, is that old.
	failures int
	lastFail time.Time
	// progressed is true once the open watch has delivered an event.
	// Bookmarks do not count: a server that sends only bookmarks and closes
	// must not be re-watched without delay.
	progressed bool
	// listNext is true while waiting before a list rather than a watch.
	listNext bool
	// wakeAt is when PhaseWaiting ends.
	wakeAt time.Time
	// openedAt is when the open watch opened (its WatchOpened step).
	openedAt time.Time
	// known is, in relist mode only, the last object delivered for each
	// key still present; nil otherwise.
	known   map[string]runtime.Object
	relist  bool
	backoff reflector.Backoff
	rand    *rand.Rand
}

// ErrInitialResourceVersion is returned for an initial RV of "" or "0"
// outside relist mode.
var ErrInitialResourceVersion = errors.New(`retrywatcher: initial resource version "" or "0" is not supported: ` +
	`a watch from "" or "0" starts with synthetic ADDED events for every object and cannot be resumed ` +
	`exactly; list first and pass the list's resource version, or use relist mode`)

// NewMachine validates cfg and returns a machine in PhaseNew.
func NewMachine(cfg Config) (*Machine, error) {
	rv := cfg.ResourceVersion
	if rv == "0" || (rv == "" && !cfg.Relist) {
		return nil, ErrInitialResourceVersion
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	m := &Machine{relist: cfg.Relist, backoff: cfg.Backoff.WithDefaults(defaultBackoff), rand: cfg.Rand}
	if rv != "" {
		num, ok := parseRV(rv)
		if !ok {
			return nil, fmt.Errorf("retrywatcher: initial resource version %q is malformed: %s", rv, rvRule)
		}
		m.setRV(rv, num)
	}
	if cfg.Relist {
		m.known = make(map[string]runtime.Object, len(cfg.Known))
		for _, obj := range cfg.Known {
			if acc, err := meta.Accessor(obj); err == nil {
				m.known[objname.Of(acc)] = obj
			}
		}
	}
	return m, nil
}

// Phase returns the current phase.
func (m *Machine) Phase() Phase { return m.phase }

// ResourceVersion returns the RV of the last delivered event or bookmark.
func (m *Machine) ResourceVersion() string { return m.lastRV }

// Start begins at now: a watch, or a list in relist mode without an RV.
// Later calls return nil.
func (m *Machine) Start(now time.Time) []Effect {
	if m.phase != PhaseNew {
		return nil
	}
	m.now = now
	if m.lastRV == "" {
		return m.list()
	}
	return m.open()
}

// Step feeds one input observed at now and returns the effects to execute.
// Inputs that do not belong to the current phase (a Tick before the
// deadline, an event while waiting) are ignored, and so is every input
// after the machine stopped.
func (m *Machine) Step(now time.Time, in Input) []Effect {
	if m.phase == PhaseStopped {
		return nil
	}
	m.now = now
	switch in := in.(type) {
	case Stop:
		return m.stop()
	case Tick:
		return m.tick()
	case WatchOpened:
		return m.watchOpened()
	case WatchFailed:
		return m.watchFailed(in.Err)
	case WatchEvent:
		return m.event(in.Event)
	case WatchClosed:
		return m.streamClosed()
	case Listed:
		return m.listed(in.Items, in.ResourceVersion)
	case ListFailed:
		return m.listFailed(in.Err)
	}
	return nil
}

// Deadline is the time at which the machine wants a Tick: the end of the
// wait in progress. ok is false when it needs none.
func (m *Machine) Deadline() (at time.Time, ok bool) {
	if m.phase == PhaseWaiting {
		return m.wakeAt, true
	}
	return time.Time{}, false
}

func (m *Machine) watchOpened() []Effect {
	if m.phase == PhaseOpening {
		m.phase = PhaseWatching
		m.progressed = false
		m.openedAt = m.now
	}
	return nil
}

func (m *Machine) watchFailed(err error) []Effect {
	if m.phase != PhaseOpening {
		return nil
	}
	return m.fail(err, nil)
}

// streamClosed: a stream that delivered an event reopens at once, and so
// does one that lasted at least the backoff's cap (an idle watch ending
// normally: reopening it at once is no faster than the backoff's slowest
// pace); any other backs off.
func (m *Machine) streamClosed() []Effect {
	if m.phase != PhaseWatching {
		return nil
	}
	if m.progressed || m.now.Sub(m.openedAt) >= m.backoff.Max {
		m.failures = 0
		return m.open()
	}
	return m.wait(0, "closed-without-progress")
}

// tick ends the wait in progress once its deadline has come.
func (m *Machine) tick() []Effect {
	if m.phase != PhaseWaiting || m.now.Before(m.wakeAt) {
		return nil
	}
	if m.listNext {
		return m.list()
	}
	return m.open()
}

func (m *Machine) stop() []Effect {
	m.phase = PhaseStopped
	return []Effect{CloseWatch{}, Finish{}}
}

func (m *Machine) event(ev watch.Event) []Effect {
	if m.phase != PhaseWatching {
		return nil
	}
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		return m.objectEvent(ev)
	case watch.Error:
		return append([]Effect{CloseWatch{}}, m.fail(statusFromEvent(ev), &ev)...)
	default:
		return m.abort(fmt.Errorf("retrywatcher: unknown watch event type %q", ev.Type))
	}
}

func (m *Machine) objectEvent(ev watch.Event) []Effect {
	rv, ok := resourceVersionOf(ev.Object)
	if !ok && ev.Type == watch.Bookmark {
		return []Effect{Drop{Event: ev, Reason: DropMalformed}}
	}
	if !ok {
		return m.abort(fmt.Errorf("retrywatcher: %s event carries a %T without a resource version", ev.Type, ev.Object))
	}
	num, ok := parseRV(rv)
	switch {
	case !ok && ev.Type == watch.Bookmark:
		// A bookmark only moves the resume point: refusing it loses nothing.
		return []Effect{Drop{Event: ev, Reason: DropMalformed}}
	case !ok:
		return m.abort(fmt.Errorf("retrywatcher: %s has a malformed resource version %q (%s); "+
			"dropping it would leave a gap in the stream", describeEvent(ev), rv, rvRule))
	case num <= m.lastNum:
		return []Effect{Drop{Event: ev, Reason: DropStale}}
	case ev.Type == watch.Bookmark:
		m.setRV(rv, num)
		return nil
	}
	if m.known != nil {
		acc, err := meta.Accessor(ev.Object)
		if err != nil {
			return m.abort(fmt.Errorf("retrywatcher: %s event carries a %T without object metadata, "+
				"which relist mode needs to key it: %w", ev.Type, ev.Object, err))
		}
		key := objname.Of(acc)
		if ev.Type == watch.Deleted {
			delete(m.known, key)
		} else {
			m.known[key] = ev.Object
		}
	}
	m.setRV(rv, num)
	m.progressed = true
	m.failures = 0
	return []Effect{Deliver{Event: ev}}
}

// setRV records rv, whose numeric value is num, as the last delivered RV.
func (m *Machine) setRV(rv string, num uint64) {
	m.lastRV, m.lastNum = rv, num
}

// fail decides what a failure means. ev is the ERROR event that carried it,
// if any, so that it reaches the consumer unchanged.
func (m *Machine) fail(err error, ev *watch.Event) []Effect {
	class, retryAfter := classify(err)
	switch class {
	case ClassGone:
		if m.relist {
			return m.list()
		}
		fallthrough
	case ClassUnauthorized:
		out := errorEvent(err)
		if ev != nil {
			out = *ev
		}
		m.phase = PhaseStopped
		return []Effect{Deliver{Event: out}, Finish{Err: err}}
	}
	return m.wait(retryAfter, string(class))
}

// abort stops for an input the machine cannot make sense of without risking
// a silent gap in the stream.
func (m *Machine) abort(err error) []Effect {
	m.phase = PhaseStopped
	return []Effect{CloseWatch{}, Deliver{Event: errorEvent(err)}, Finish{Err: err}}
}

func (m *Machine) open() []Effect {
	m.phase = PhaseOpening
	return []Effect{OpenWatch{ResourceVersion: m.lastRV}}
}

func (m *Machine) list() []Effect {
	m.phase = PhaseListing
	m.listNext = false
	return []Effect{List{}}
}

// wait backs off for at least floor, remembering whether a list or a watch
// comes next.
func (m *Machine) wait(floor time.Duration, reason string) []Effect {
	m.listNext = m.phase == PhaseListing
	m.failures = m.backoff.Next(m.failures, m.lastFail, m.now)
	m.lastFail = m.now
	d := max(m.backoff.Delay(m.failures, m.rand), floor)
	m.phase, m.wakeAt = PhaseWaiting, m.now.Add(d)
	return []Effect{Wait{For: d, Reason: reason}}
}
