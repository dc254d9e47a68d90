package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/reconciler"
)

// settle waits, up to d.settle, until the controller has converged (every
// source mirrored, no orphan) and the cache matches the server. It reports
// whether that happened.
func (s *demo) settle(ctx context.Context) bool {
	deadline := time.Now().Add(s.d.settle)
	statusCtx, stopStatus := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.printStatus(statusCtx) })
	defer func() { stopStatus(); wg.Wait() }()
	for {
		list, err := s.cl.list(ctx)
		if err == nil && len(reconciler.Check(s.inf.Reader())) == 0 && len(diffCache(s.inf.Reader().List(), list)) == 0 {
			fmt.Fprintf(s.out, "[%s] controller converged: every source mirrored, no orphans\n", elapsed(s.start))
			return true
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(s.out, "[%s] controller did not converge within %s\n", elapsed(s.start), s.d.settle)
			return false
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

// verify compares the cache with a fresh consistent list, allowing the
// informer a few seconds to catch up with the last writes. It returns the
// differences, if any.
func (s *demo) verify(ctx context.Context) ([]string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := s.cl.list(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the server for the final check: %w", err)
		}
		diff := diffCache(s.inf.Reader().List(), list)
		if len(diff) == 0 || time.Now().After(deadline) {
			return diff, nil
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

// diffCache lists, sorted, every key whose presence or resource version
// differs between the cache and the server's list.
func diffCache(cached []*corev1.ConfigMap, list *corev1.ConfigMapList) []string {
	server := make(map[string]string, len(list.Items))
	for i := range list.Items {
		o := &list.Items[i]
		server[o.Namespace+"/"+o.Name] = o.ResourceVersion
	}
	var diff []string
	for _, o := range cached {
		key := o.Namespace + "/" + o.Name
		rv, ok := server[key]
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("only in cache: %s (rv %s)", key, o.ResourceVersion))
		case rv != o.ResourceVersion:
			diff = append(diff, fmt.Sprintf("stale in cache: %s cache rv %s, server rv %s", key, o.ResourceVersion, rv))
		}
		delete(server, key)
	}
	for key, rv := range server {
		diff = append(diff, fmt.Sprintf("missing from cache: %s (rv %s)", key, rv))
	}
	slices.Sort(diff)
	return diff
}

// summary prints what happened during the run.
func (s *demo) summary(settled bool) {
	reconciles, retries := s.ctrl.Counts()
	relists, errs := s.m.snapshot()
	w := s.out
	fmt.Fprintf(w, "\nsummary after %s:\n", time.Since(s.start).Round(time.Second))
	fmt.Fprintf(w, "  churn        %d writes, %d refused (conflicts with the controller, objects already gone)\n",
		s.writes.Load(), s.writeErrs.Load())
	if last := s.lastWriteErr.Load(); last != nil {
		fmt.Fprintf(w, "               last refusal: %s\n", *last)
	}
	fmt.Fprintf(w, "  controller   %d reconciles, %d retried; converged: %t\n", reconciles, retries, settled)
	fmt.Fprintf(w, "  informer     %d objects cached, %d watch events, %d list requests, %d watch requests\n",
		s.inf.Reader().Len(), s.m.events.Load(), s.m.lists.Load(), s.m.watches.Load())
	fmt.Fprintf(w, "  reflector    relists by cause: %s; errors by reason: %s\n", formatCounts(relists), formatCounts(errs))
	for _, h := range s.hs {
		ls := h.reg.Stats()
		fmt.Fprintf(w, "  handler      %-16s %d calls, %d coalesced, worst lag %d pending / oldest %s, %d panics\n",
			h.name, ls.Processed, ls.Coalesced, h.maxPending, h.maxOldest.Round(time.Millisecond), ls.Panics)
	}
	if s.cl.serverStats != nil {
		fmt.Fprintf(w, "  server       %s (the demo's own checks included)\n", s.cl.serverStats())
	}
}

// verdict prints the final check and turns a difference into an error.
func (s *demo) verdict(diff []string, err error) error {
	if err != nil {
		fmt.Fprintf(s.out, "cache equals server: UNKNOWN (%v)\n", err)
		return err
	}
	if len(diff) == 0 {
		fmt.Fprintf(s.out, "cache equals server: OK (%d objects, same keys and resource versions)\n", s.inf.Reader().Len())
		return nil
	}
	fmt.Fprintf(s.out, "cache equals server: FAILED (%d differences)\n", len(diff))
	for i, line := range diff {
		if i == 20 {
			fmt.Fprintf(s.out, "  ... and %d more\n", len(diff)-20)
			break
		}
		fmt.Fprintf(s.out, "  %s\n", line)
	}
	return errors.New("the informer's cache differs from the server")
}
