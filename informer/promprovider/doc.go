// Package promprovider exports informer metrics to Prometheus: the
// reflector's requests, relists and errors, the cache, the delta FIFO and
// every handler's lag, for every informer of a [factory.Factory], with one
// call.
//
// # Usage
//
//	f := factory.New(factory.Options{})
//	p, err := promprovider.Register(metrics.Registry, f) // or any prometheus.Registerer
//	if err != nil { ... }
//	pods, err := factory.Typed[*corev1.Pod, *corev1.PodList](f, "v1/pods", factory.Selection{}, client,
//		informer.Options[*corev1.Pod]{Name: "pods"})
//
// Register adds a [Provider], a prometheus.Collector, that reads every
// informer's [informer.Snapshot] (Status, cache size, queue depth, each
// [informer.Registration.Stats]) when Prometheus scrapes, so the informers'
// hot paths are unchanged whether or not metrics are on. The reflector's
// counters (lists, watches, relists by cause, errors by reason, events by
// type, time to first sync) are events rather than state: Register has
// the factory send them to [Provider.Reflector] for every informer without
// reflector metrics of its own ([factory.Factory.Observe];
// atomic increments, no allocation). An informer built without a factory
// is added with [Provider.AddInformer] and counts its reflector with
// p.Reflector(name) as its reflector.Config.Metrics and its
// informer.Options.Processing.
//
// Every family is labelled with the informer's name and its group, version
// and resource (parsed from the factory's resource name: use a GVR's
// String() or "group/version/resource" to fill all three), as client-go's
// informer metrics are (KEP-4346); handler families add "handler", the
// handler's informer.HandlerOptions.Name, or its index in registration
// order when it has none. The families, their types, labels and meanings
// are listed once, in docs/operations.md ("Metrics"); a test holds that
// table to the families a Provider describes.
//
// The reflector families and the processing latency come through
// [Provider.Reflector] (which Register wires for a factory's informers);
// the others need nothing. The latency costs two clock reads per popped
// batch, none per event.
//
// # Concurrency
//
// A Provider is safe for concurrent use; scrapes may run while informers
// are added and while they run. ReflectorMetrics is called from the
// reflector's goroutine and read by scrapes, with atomics only. Informer
// names must be unique across what one Provider exports, or the scrape
// fails with a duplicate-series error.
//
// # Testing
//
// provider_test.go runs informers against fake.Server under
// testing/synctest (one healthy with a stuck handler, one whose requests are
// forbidden), scrapes the registry over HTTP with promhttp and parses the
// text format with expfmt, and checks each value against the informers'
// Status and Registration.Stats.
package promprovider
