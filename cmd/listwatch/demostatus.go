package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// churnAndWatch runs the churn writer and the fault injector for
// d.duration (or until ctx ends), printing a status line every
// d.interval, then removes every fault.
func (s *demo) churnAndWatch(ctx context.Context) {
	runCtx, stop := context.WithTimeout(ctx, s.d.duration)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { s.churn(runCtx) })
	if s.cl.faults != nil && s.d.faults {
		wg.Go(func() { s.cl.faults(runCtx, s.start, s.out) })
	}
	s.printStatus(runCtx)
	stop()
	wg.Wait()
	healed := ""
	if s.cl.heal != nil {
		s.cl.heal()
		healed = "; faults cleared"
	}
	fmt.Fprintf(s.out, "[%s] churn stopped after %d writes (%d refused)%s\n",
		elapsed(s.start), s.writes.Load(), s.writeErrs.Load(), healed)
}

// printStatus prints a status line every d.interval until ctx ends.
func (s *demo) printStatus(ctx context.Context) {
	t := time.NewTicker(s.d.interval)
	defer t.Stop()
	lastEvents, lastAt := s.m.events.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		events, now := s.m.events.Load(), time.Now()
		rate := float64(events-lastEvents) / max(now.Sub(lastAt).Seconds(), 1e-9)
		lastEvents, lastAt = events, now
		fmt.Fprintln(s.out, s.statusLine(rate))
	}
}

// churn performs writes at d.rate until ctx ends.
func (s *demo) churn(ctx context.Context) {
	if s.d.rate == 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / s.d.rate))
	defer t.Stop()
	deadline, hasDeadline := ctx.Deadline()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A tick at the deadline races with ctx.Done (select picks at
		// random): the same seed must give the same writes, so it loses.
		if hasDeadline && !time.Now().Before(deadline) {
			return
		}
		// A write already started finishes even if the run ends meanwhile.
		if err := s.cl.step(context.WithoutCancel(ctx)); err != nil {
			msg := err.Error()
			s.lastWriteErr.Store(&msg)
			s.writeErrs.Add(1)
			continue
		}
		s.writes.Add(1)
	}
}

// statusLine is the one-line live view: cache, event rate, controller,
// each handler's lag, the reflector's phase and errors so far.
func (s *demo) statusLine(rate float64) string {
	st := s.inf.Status()
	reconciles, retries := s.ctrl.Counts()
	var hs []string
	for _, h := range s.hs {
		ls := h.reg.Stats()
		h.maxPending = max(h.maxPending, ls.Pending)
		h.maxOldest = max(h.maxOldest, ls.OldestPending)
		hs = append(hs, fmt.Sprintf("%s %d/%s", h.name, ls.Pending, ls.OldestPending.Round(100*time.Millisecond)))
	}
	_, errs := s.m.snapshot()
	phase := st.Phase.String()
	if st.LastError != nil {
		phase += "(" + st.Reason.String() + ")"
	}
	return fmt.Sprintf("[%s] cache %d | %4.0f ev/s | ctrl %d rec %d retry | %s | %s | errs %s",
		elapsed(s.start), s.inf.Reader().Len(), rate, reconciles, retries, strings.Join(hs, " "),
		phase, formatCounts(errs))
}
