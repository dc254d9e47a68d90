// Package statuspage serves a live status page of every informer of a
// factory: phase, synced, the reason and text of the last error, resource
// version, freshness (stale or not, how far behind the server), cached
// objects, relists by cause and each handler's lag, as a
// small HTML page (no script, no external asset) or as JSON. Both render
// the informers' informer.Snapshot, the one shape of an informer's state.
//
// # Usage
//
//	f := factory.New(factory.Options{})
//	p, _ := promprovider.Register(registry, f)
//	mux.Handle("/informers", statuspage.Handler(f, statuspage.Options{Relists: p.Relists}))
//
// A controller-runtime manager can serve it next to its metrics:
// mgr.AddMetricsServerExtraHandler("/informers", statuspage.Handler(f, ...)).
//
// # Concurrency
//
// The handler is safe for concurrent use; each request takes a fresh
// snapshot of every informer (Factory.Snapshots), which takes each
// informer's lock only to copy its handler list.
//
// # Testing
//
// The tests serve a factory whose informers run against fake.Server under
// testing/synctest (one healthy with a stuck handler, one forbidden) and
// check the JSON and the page's rows; test/statuspage checks the page in a
// real browser.
package statuspage
