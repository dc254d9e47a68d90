package reflector

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/store"
)

// result is the answer to a list or to a watch being opened, tagged with the
// generation of its request so that late answers are dropped.
type result struct {
	gen uint64
	in  Input
	// w is the opened watch (with in == WatchOpened{}); a stale one is
	// stopped by the receiver.
	w watch.Interface
}

// shell executes a machine's effects for one Run. It reads the open watch's
// result channel itself, so events reach the machine without a goroutine
// hop; only requests (list, opening a watch) run in goroutines.
type shell[T store.Object] struct {
	r      *Reflector[T]
	ctx    context.Context // cancelled when Run returns
	logger klog.Logger
	wg     sync.WaitGroup // request goroutines
	// lists and opens carry request answers to Run's loop.
	lists, opens chan result
	// listGen and watchGen are the generations of the current list and
	// watch request; answers to others are stale.
	listGen, watchGen uint64
	// cancelList cancels the context of the current list request; nil
	// when none is running. A list the machine abandons (a relist asked
	// for while listing) has its request cancelled when the next starts.
	cancelList context.CancelFunc
	// w is the open watch, nil when none; events is its result channel.
	w      watch.Interface
	events <-chan watch.Event
	// cancelWatch cancels the context of the current watch request (opening
	// or open); nil when there is none.
	cancelWatch context.CancelFunc
	// timer fires at the machine's deadline; armedAt is that deadline, zero
	// when the timer is not armed.
	timer   clock.Timer
	armedAt time.Time
}

// Run lists and watches until ctx is cancelled, then stops the watch, waits
// for its own goroutines and returns nil. It returns an error only when
// called a second time.
func (r *Reflector[T]) Run(ctx context.Context) error {
	if !r.ran.CompareAndSwap(false, true) {
		return errRan
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &shell[T]{r: r, ctx: ctx, logger: klog.FromContext(ctx).WithValues("reflector", r.name),
		lists: make(chan result), opens: make(chan result)}
	defer func() {
		s.stopWatch()
		s.disarm()
		cancel()
		s.wg.Wait()
	}()
	s.logger.V(3).Info("Starting reflector")
	s.execute(r.m.Start(r.clock.Now()))
	for {
		r.publish()
		if !s.next() {
			s.execute(r.m.Step(r.clock.Now(), Stop{}))
			r.publish()
			s.logger.V(3).Info("Stopping reflector")
			return nil
		}
	}
}

// next waits for one thing to happen and steps the machine; it returns
// false when the Run's context is done.
func (s *shell[T]) next() bool {
	fire := s.arm()
	var in Input
	select {
	case <-s.ctx.Done():
		return false
	case res := <-s.lists:
		if res.gen != s.listGen {
			return true
		}
		s.endList()
		in = res.in
	case res := <-s.opens:
		if res.gen != s.watchGen || s.cancelWatch == nil {
			if res.w != nil {
				res.w.Stop()
			}
			return true
		}
		s.w = res.w
		if s.w != nil {
			s.events = s.w.ResultChan()
		}
		in = res.in
	case ev, ok := <-s.events:
		if ok {
			s.burst(ev)
			return true
		}
		s.stopWatch()
		in = WatchClosed{}
	case <-fire:
		s.armedAt = time.Time{}
		in = Tick{}
	case <-s.r.relist:
		in = Relist{}
	}
	s.execute(s.r.m.Step(s.r.clock.Now(), in))
	return true
}

// burstMax is how many watch events next steps the machine with, at most,
// before it looks at its other inputs again.
const burstMax = 64

// burst steps the machine with ev and then with the events already waiting
// on the watch, up to burstMax in all: a plain receive per event instead of
// a select over every input (the select was a sixth of the reflector's CPU
// per event in steady state). A cancelled Run, a due deadline or a relist
// request waits at most for the burst. The clock is read once per burst:
// its events are stamped with the time the burst began (a clock read was
// another twentieth of the CPU per event), so the watch's last activity may
// be recorded early by as long as the burst took to apply: microseconds
// with the informer's queue as the store, and with a slow store at worst a
// watchdog (Config.IdleTimeout) that resumes a quiet watch that much
// sooner, from the last resource version.
func (s *shell[T]) burst(ev watch.Event) {
	now := s.r.clock.Now()
	s.execute(s.r.m.Step(now, WatchEvent{Event: ev}))
	for range burstMax - 1 {
		select {
		case ev, ok := <-s.events: // nil once an effect stopped the watch
			if !ok {
				s.stopWatch()
				s.execute(s.r.m.Step(s.r.clock.Now(), WatchClosed{}))
				return
			}
			s.execute(s.r.m.Step(now, WatchEvent{Event: ev}))
		default:
			return
		}
	}
}

// arm keeps the timer set to the machine's deadline, if it has one, and
// returns its channel.
func (s *shell[T]) arm() <-chan time.Time {
	at, ok := s.r.m.Deadline()
	if !ok {
		s.disarm()
		return nil
	}
	if !at.Equal(s.armedAt) {
		s.disarm()
		s.timer = s.r.clock.NewTimer(max(at.Sub(s.r.clock.Now()), 0))
		s.armedAt = at
	}
	return s.timer.C()
}

func (s *shell[T]) disarm() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.armedAt = time.Time{}
}

// execute runs effects in order. If the store refuses a Replace (or a
// list page or its end), the rest of the batch is dropped and the machine
// is told. Executed effects are cleared: the slice is the machine's, kept
// until its next step, and must not pin a list (a streaming list's last
// step may be the last for a long time).
func (s *shell[T]) execute(effects []Effect) {
	for i, e := range effects {
		if err := s.do(e); err != nil {
			clear(effects[:i+1])
			s.execute(s.r.m.Step(s.r.clock.Now(), ReplaceFailed{Err: err}))
			return
		}
	}
	clear(effects)
}

// do runs one effect; it returns an error only for a refused Replace.
func (s *shell[T]) do(e Effect) error {
	if l := s.logger.V(5); l.Enabled() {
		l.Info("Effect", "effect", e.String())
	}
	switch e := e.(type) {
	case List:
		s.endList() // the one it replaces, abandoned
		s.listGen++
		ctx, cancel := context.WithCancel(s.ctx)
		s.cancelList = cancel
		s.wg.Add(1)
		go s.list(ctx, s.listGen, e)
	case Watch:
		s.stopWatch()
		s.watchGen++
		ctx, cancel := context.WithCancel(s.ctx)
		s.cancelWatch = cancel
		s.wg.Add(1)
		go s.open(ctx, s.watchGen, e)
	case StopWatch:
		s.stopWatch()
	case Sleep:
		s.logger.V(4).Info("Backing off", "delay", e.D)
	case Replace[T]:
		if e.Copy {
			ownCopies(e.Items)
		}
		if err := s.r.store.Replace(e.Items, e.ResourceVersion); err != nil {
			s.logger.Error(err, "Store refused the list", "resourceVersion", e.ResourceVersion)
			return err
		}
		s.logger.V(2).Info("Caches populated", "items", len(e.Items), "resourceVersion", e.ResourceVersion)
	case ReplacePage[T]:
		if e.Copy {
			ownCopies(e.Items)
		}
		if err := s.r.store.(PagedStore[T]).ReplacePage(e.Items, e.First); err != nil {
			s.logger.Error(err, "Store refused a list page", "items", len(e.Items))
			return err
		}
	case ReplaceEnd:
		if err := s.r.store.(PagedStore[T]).ReplaceEnd(e.ResourceVersion); err != nil {
			s.logger.Error(err, "Store refused the end of the list", "resourceVersion", e.ResourceVersion)
			return err
		}
		s.logger.V(2).Info("Caches populated", "resourceVersion", e.ResourceVersion)
	case *Apply[T]:
		s.apply(*e)
	case Apply[T]:
		s.apply(e)
	case Progress:
		UpdateResourceVersion(s.r.store, e.ResourceVersion)
	case ReportError:
		s.report(e)
	}
	return nil
}

// endList cancels the context of the current list request, answered or
// abandoned.
func (s *shell[T]) endList() {
	if s.cancelList != nil {
		s.cancelList()
		s.cancelList = nil
	}
}

// stopWatch closes the open watch or abandons the one being opened.
func (s *shell[T]) stopWatch() {
	if s.w != nil {
		s.w.Stop()
		s.w, s.events = nil, nil
	}
	if s.cancelWatch != nil {
		s.cancelWatch()
		s.cancelWatch = nil
	}
}
