package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
)

// loggedEvent is one event a watcher delivered.
type loggedEvent struct {
	Type watch.EventType
	// Key is namespace/name, RV the object's resource version; for an
	// ERROR event Key holds the Status message instead.
	Key, RV string
}

// eventLog records what a watch.Interface delivers, in order.
type eventLog struct {
	mu sync.Mutex
	// events is everything delivered so far. Guarded by mu.
	events []loggedEvent
	// drained is closed once the watcher's result channel has closed and
	// every event it delivered is in events.
	drained chan struct{}
}

// collect reads ch until it closes, logging every event; the spec's cleanup
// calls stop and waits for ch to close.
func collect(ch <-chan watch.Event, stop func()) *eventLog {
	GinkgoHelper()
	log := &eventLog{drained: make(chan struct{})}
	go func() {
		defer close(log.drained)
		for ev := range ch {
			log.add(ev)
		}
	}()
	DeferCleanup(func() {
		stop()
		Eventually(log.drained).WithTimeout(30 * time.Second).Should(BeClosed())
	})
	return log
}

func (l *eventLog) add(ev watch.Event) {
	e := loggedEvent{Type: ev.Type}
	if ev.Type == watch.Error {
		e.Key = apierrors.FromObject(ev.Object).Error()
	} else if m, err := meta.Accessor(ev.Object); err == nil {
		e.Key, e.RV = m.GetNamespace()+"/"+m.GetName(), m.GetResourceVersion()
	}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// summary counts the events by type, listing ERROR messages; summary(want)
// is what a watcher that saw each object created once shows.
func (l *eventLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := map[watch.EventType]int{}
	var errs []string
	for _, e := range l.events {
		counts[e.Type]++
		if e.Type == watch.Error {
			errs = append(errs, e.Key)
		}
	}
	out := fmt.Sprintf("%d ADDED, %d MODIFIED, %d DELETED, %d ERROR", counts[watch.Added], counts[watch.Modified], counts[watch.Deleted], counts[watch.Error])
	if len(errs) > 0 {
		out += ": " + strings.Join(errs, "; ")
	}
	return out
}

// summary is what an eventLog of one ADDED per object in want shows.
func summary(want map[string]string) string {
	return fmt.Sprintf("%d ADDED, 0 MODIFIED, 0 DELETED, 0 ERROR", len(want))
}

// check verifies that the log is exactly one ADDED per object of want, at
// its resource version, in strictly increasing resource version order.
//
//lint:ignore U1000 kept for specs that check a complete log
func (l *eventLog) check(want map[string]string) error {
	gone, err := l.checkPrefix(want)
	if err == nil && gone {
		err = fmt.Errorf("the watch ended with a 410 ERROR")
	}
	return err
}

// checkPrefix is check, except that the log may be cut short by one final
// ERROR with a 410 (the watch cannot resume); gone reports whether it was.
func (l *eventLog) checkPrefix(want map[string]string) (gone bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	var last uint64
	for i, e := range l.events {
		if e.Type == watch.Error && i == len(l.events)-1 && strings.Contains(e.Key, "too old") {
			return true, nil
		}
		if e.Type != watch.Added {
			return false, fmt.Errorf("event %d is %s %s", i, e.Type, e.Key)
		}
		if seen[e.Key] {
			return false, fmt.Errorf("event %d repeats %s", i, e.Key)
		}
		seen[e.Key] = true
		if want[e.Key] != e.RV {
			return false, fmt.Errorf("event %d: %s at rv %s, the server has rv %q", i, e.Key, e.RV, want[e.Key])
		}
		rv, err := strconv.ParseUint(e.RV, 10, 64)
		if err != nil || rv <= last {
			return false, fmt.Errorf("event %d: rv %s after %d", i, e.RV, last)
		}
		last = rv
	}
	if len(seen) != len(want) {
		return false, fmt.Errorf("saw %d objects, the server has %d", len(seen), len(want))
	}
	return false, nil
}

// count returns the number of logged events of type t.
func (l *eventLog) count(t watch.EventType) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, e := range l.events {
		if e.Type == t {
			n++
		}
	}
	return n
}

// ended reports whether the last logged event is an ERROR.
func (l *eventLog) ended() bool {
	e, ok := l.last()
	return ok && e.Type == watch.Error
}

// replay applies the logged events to an empty map of key -> resource
// version, as a consumer building a cache from them would, and returns it
// with the number of ERROR events.
func (l *eventLog) replay(initial map[string]string) (state map[string]string, errs int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	state = map[string]string{}
	for k, v := range initial {
		state[k] = v
	}
	for _, e := range l.events {
		switch e.Type {
		case watch.Added, watch.Modified:
			state[e.Key] = e.RV
		case watch.Deleted:
			delete(state, e.Key)
		case watch.Error:
			errs++
		}
	}
	return state, errs
}

// last returns the last logged event, if any.
func (l *eventLog) last() (loggedEvent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.events) == 0 {
		return loggedEvent{}, false
	}
	return l.events[len(l.events)-1], true
}
