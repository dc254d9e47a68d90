// Package reflector is the List-then-Watch engine: it keeps a Store in step
// with a Kubernetes resource by listing it, then watching it from the list's
// resource version, relisting when the watch cannot resume.
//
// The engine is split in two, as etcd's raft splits RawNode from Node:
//
//   - Machine is a pure state machine. It has no goroutines, channels or
//     clock: Step takes the current time and one Input (a list page, a watch
//     event, an error, a tick) and returns Effects (list with these options,
//     watch from this resource version, replace the store, apply an event,
//     sleep). Randomness comes from an injected seeded source, so the same
//     inputs always give the same effects.
//   - Reflector is the thin shell: Run executes the effects against a
//     client-go ListerWatcher and a Store and feeds the results back.
//
// The phases (listing, streaming, watching, backoff, stopped) and the error
// decision table are documented in docs/reflector.md and on Phase.
//
// # Usage
//
//	r, err := reflector.New(reflector.Options[*corev1.Pod]{
//		Source: reflector.FromClient[*corev1.PodList](clientset.CoreV1().Pods(ns)),
//		Store:  myStore, // anything with Add, Update, Delete, Replace
//		Config: reflector.Config[*corev1.Pod]{IdleTimeout: 3 * time.Minute},
//	})
//	if err != nil { ... }
//	go r.Run(ctx)
//	...
//	st := r.Status() // phase, synced, last error and its Reason (e.g. Forbidden)
//
// Any client-go cache.ListerWatcher is a source through FromListerWatcher.
// A store may also implement ResourceVersionUpdater to hear about bookmarks;
// the helper UpdateResourceVersion is the only place that probes for it.
//
// Lists are paginated (500 per page) and start from the watch cache
// (resourceVersion "0"); an expired resource version or continue token falls
// back to a quorum read (""). When the server supports it, a streaming list
// (sendInitialEvents) replaces the paginated list and falls back to it on
// errors, as client-go does; Config.WatchList forces either. A PagedStore
// takes a list a page at a time, also one that came in a single response
// (a source that ignores the limit): the shell copies each page's items
// into objects of their own only as it hands the page over (ListPage.Shared),
// so the copies of a whole list never sit beside the cache at once.
// Watches ask for
// bookmarks and a random timeout in [5m, 10m). Errors are classified into a
// Reason (Classify), counted through Metrics and shown in Status: 401/403 and
// 404 are retried slowly with a visible reason, 429 honours Retry-After, and
// nothing ever retries in a hot loop. An optional idle watchdog
// (Config.IdleTimeout) replaces a watch that brings neither events nor
// bookmarks.
//
// # Concurrency
//
// A Machine is not safe for concurrent use; it is meant to be owned by one
// goroutine. Run is that goroutine for a Reflector: it steps the machine,
// calls the Store (one call at a time, never concurrently) and reads the
// open watch's result channel itself. Only requests run in goroutines of
// their own: each list call, and each watch being opened, whose answers are
// funnelled back to Run; answers to a superseded request are dropped (a
// superseded watch is stopped). Every request has its own context,
// cancelled when the machine stops or abandons it (a list, when the next
// list starts), so a hung request never outlives its watch or list. Status, LastSyncResourceVersion and HasSynced are safe
// to call from any goroutine and return the state after the machine's last
// step. Run returns after ctx is cancelled, once its watch is stopped and
// all its goroutines have ended; a Reflector runs once.
//
// # Testing
//
// Every transition is a data-driven scenario under testdata/ (run with
// go test -run TestScenarios; regenerate expectations with -rewrite): the
// scripts feed inputs such as "list-page rv=10 items=(a,b) continue=x",
// "watch-event MODIFIED a rv=12", "watch-error 410" or "tick 5s" to a
// Machine and record its effects and state. The shell is tested under
// testing/synctest against a scripted lister-watcher that checks the exact
// sequence of List and Watch options, and, with the fake apiserver of package
// fake, against randomized fault schedules whose final store must equal the
// server's objects at their resource versions; client-go's cache.Reflector
// runs through the same harness for comparison, and through the same
// scripted conversations (paginated and streaming), where both must make the
// same requests and end with the same store. Tests of code using a
// Reflector can run it inside a synctest bubble: all its timers use the
// injected Options.Clock, by default the real clock that synctest fakes.
package reflector
