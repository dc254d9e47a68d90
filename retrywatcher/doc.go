// Package retrywatcher provides a watch.Interface that survives disconnects
// and never loses, repeats or reorders an event.
//
// A RetryWatcher remembers the resource version (RV) of the last event or
// bookmark it delivered. When its watch closes or fails transiently it opens
// a new one from that RV, with exponential backoff and jitter (see
// [Options.Backoff]); a delay the server asks for (a 429's Retry-After) is a
// floor. Failures are read with the reflector's vocabulary
// ([reflector.Classify]): an expired resource version (410, or one too
// large for the server) ends the watch, or relists in relist mode; 401 and
// 403 end it; everything else is retried. An event
// whose RV is not newer than the last one delivered is dropped and counted,
// so a server that replays history cannot produce duplicates.
//
// # Pacing
//
// Whatever the server does, a RetryWatcher makes no more watch calls than
// its backoff allows. Only a watch that delivered an event reopens at once
// (and one that stayed open for at least [Options.Backoff].Max: an idle watch
// ending normally). Every other attempt counts as a failure and waits the
// next backoff step: a watch that failed to open, ended with an ERROR
// event, closed at once, or sent only bookmarks. With the defaults, a
// server that fails or closes every watch at once without an event sees 7
// watch calls in the first minute and 2 a minute from then on (client-go's
// RetryWatcher makes up to 60 a minute).
//
// RVs must be what kube-apiserver issues: positive decimal integers. A
// bookmark with any other RV (empty, "abc", "0") is ignored: the watcher
// keeps resuming from the last valid RV, logs it at the default verbosity
// and counts it in [Stats].Malformed. An event with a malformed RV ends the
// watcher with an error, since dropping it would leave a gap. An event's
// object needs only a GetResourceVersion method, as for client-go's
// RetryWatcher; relist mode also needs object metadata, to key objects.
//
// Some failures cannot be retried without losing events. On 410 Gone (the
// RV is older than the server's history) and on 401/403, the consumer gets
// one ERROR event carrying the server's Status and the watcher stops; Err
// says why. In relist mode (Options.Lister set) a 410 is bridged instead: the
// watcher lists with a quorum read, delivers what changed since the state it
// last delivered as synthetic ADDED, MODIFIED and DELETED events (a DELETED
// carries the last object delivered), and carries on from the list's RV.
//
// # Usage
//
// Switching from client-go is an import change:
//
//	rw, err := retrywatcher.New(ctx, retrywatcher.Options{ResourceVersion: list.ResourceVersion, Watcher: lw})
//	if err != nil { ... }
//	defer rw.Stop()
//	for ev := range rw.ResultChan() { ... }
//
// New takes an Options struct for relist mode, backoff and the clock. Until
// and UntilWithSync wait for conditions over the event stream, as their
// client-go namesakes do.
//
// # Design
//
// Decisions live in [Machine], a state machine in the shape of
// [reflector.Machine], with no goroutines, channels or clock: Step takes
// the current time and one [Input] (watch opened or failed, an event, the
// stream closed, a list returned or failed, a tick, a stop) and returns
// Effects (open a watch, deliver an event, wait, list, finish), and
// Deadline says when the wait in progress ends. Jitter comes from an
// injected random source (Options.Rand), so a seeded source makes every
// wait reproducible. RetryWatcher's goroutine only executes effects, arms
// one timer at the machine's deadline, and feeds outcomes back.
//
// # Concurrency
//
// A RetryWatcher runs one goroutine, started by New and ended by Stop, by the
// context ending, or by a terminal error; Done closes after ResultChan has
// closed. ResultChan is unbuffered: a slow consumer slows the watch, never
// loses events. Stop, Done, Err and Stats are safe from any goroutine.
//
// # Testing
//
// Machine's transitions are data-driven scenarios in testdata/ (run with
// -rewrite to regenerate the expected effects): inputs such as "opened",
// "event type=ADDED obj=a@11", "watch-failed err=429:7" and "tick
// deadline" are stepped at a scripted clock. The RetryWatcher itself is
// tested under testing/synctest against a scripted server, with the same
// scenarios run against client-go's RetryWatcher for comparison.
package retrywatcher
