package reflector

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/store"
)

// result is an input produced by an I/O goroutine, tagged with the
// generation of the request it answers so that late answers are dropped.
type result struct {
	watch bool   // from a watch (else from a list)
	gen   uint64 // generation of the request
	in    Input
}

// shell executes a machine's effects for one Run.
type shell[T store.Object] struct {
	r       *Reflector[T]
	ctx     context.Context // cancelled when Run returns
	logger  klog.Logger
	results chan result // every I/O goroutine's inputs, read by Run only
	wg      sync.WaitGroup
	// listGen and watchGen are the generations of the current list and
	// watch; results from others are stale.
	listGen, watchGen uint64
	// stopCurrentWatch cancels the context of the current watch request,
	// which ends its goroutine and closes the watch; nil when none.
	stopCurrentWatch context.CancelFunc
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
		results: make(chan result)}
	defer func() {
		cancel()
		s.stopWatch()
		s.wg.Wait()
	}()
	s.logger.V(3).Info("Starting reflector")
	s.execute(r.m.Start(r.clock.Now()))
	for {
		r.publish()
		timer, fire := s.arm()
		select {
		case <-ctx.Done():
			s.execute(r.m.Step(r.clock.Now(), Stop{}))
			r.publish()
			s.logger.V(3).Info("Stopping reflector")
			return nil
		case res := <-s.results:
			if l := s.logger.V(5); l.Enabled() {
				l.Info("Input", "input", fmt.Sprintf("%T", res.in), "current", s.current(res))
			}
			if s.current(res) {
				s.execute(r.m.Step(r.clock.Now(), res.in))
			}
		case <-fire:
			s.execute(r.m.Step(r.clock.Now(), Tick{}))
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// arm starts a timer for the machine's deadline, if it has one.
func (s *shell[T]) arm() (clock.Timer, <-chan time.Time) {
	at, ok := s.r.m.Deadline()
	if !ok {
		return nil, nil
	}
	t := s.r.clock.NewTimer(max(at.Sub(s.r.clock.Now()), 0))
	return t, t.C()
}

func (s *shell[T]) current(res result) bool {
	if res.watch {
		return res.gen == s.watchGen && s.stopCurrentWatch != nil
	}
	return res.gen == s.listGen
}

// execute runs effects in order. If the store refuses a Replace, the rest
// of the batch is dropped and the machine is told.
func (s *shell[T]) execute(effects []Effect) {
	for _, e := range effects {
		if err := s.do(e); err != nil {
			s.execute(s.r.m.Step(s.r.clock.Now(), ReplaceFailed{Err: err}))
			return
		}
	}
}

// do runs one effect; it returns an error only for a refused Replace.
func (s *shell[T]) do(e Effect) error {
	if l := s.logger.V(5); l.Enabled() {
		l.Info("Effect", "effect", e.String())
	}
	switch e := e.(type) {
	case List:
		s.listGen++
		s.wg.Add(1)
		go s.list(s.listGen, e)
	case Watch:
		s.stopWatch()
		s.watchGen++
		ctx, cancel := context.WithCancel(s.ctx)
		s.stopCurrentWatch = cancel
		s.wg.Add(1)
		go s.watch(ctx, s.watchGen, e)
	case StopWatch:
		s.stopWatch()
	case Sleep:
		s.logger.V(4).Info("Backing off", "delay", e.D)
	case Replace[T]:
		if err := s.r.store.Replace(e.Items, e.ResourceVersion); err != nil {
			s.logger.Error(err, "Store refused the list", "resourceVersion", e.ResourceVersion)
			return err
		}
		s.logger.V(2).Info("Caches populated", "items", len(e.Items), "resourceVersion", e.ResourceVersion)
	case Apply[T]:
		s.apply(e)
	case Progress:
		UpdateResourceVersion(s.r.store, e.ResourceVersion)
	case ReportError:
		s.report(e)
	}
	return nil
}

func (s *shell[T]) apply(e Apply[T]) {
	var err error
	switch e.Type {
	case watch.Added:
		err = s.r.store.Add(e.Object)
	case watch.Modified:
		err = s.r.store.Update(e.Object)
	case watch.Deleted:
		err = s.r.store.Delete(e.Object)
	}
	if err != nil {
		s.r.m.cfg.Metrics.Error(ReasonStore)
		s.logger.Error(err, "Store refused a watch event", "type", e.Type, "object", klog.KObj(e.Object))
	}
}

func (s *shell[T]) report(e ReportError) {
	switch e.Reason {
	case ReasonExpired, ReasonWatchIdle, ReasonShortWatch, ReasonConnection, ReasonTooManyRequests:
		s.logger.V(2).Info("Watch or list interrupted", "reason", e.Reason, "err", e.Err)
	default:
		s.logger.Error(e.Err, "List or watch failed", "reason", e.Reason)
	}
}

func (s *shell[T]) stopWatch() {
	if s.stopCurrentWatch != nil {
		s.stopCurrentWatch()
		s.stopCurrentWatch = nil
	}
}
