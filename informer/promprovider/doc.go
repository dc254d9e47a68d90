// Package promprovider exports informer metrics to Prometheus: the
// reflector's requests, relists and errors, the cache, the delta FIFO and
// every handler's lag, for every informer of a [informer.Factory], with one
// call.
//
// # Usage
//
//	f := informer.NewFactory(informer.FactoryOptions{})
//	p, err := promprovider.Register(metrics.Registry, f) // or any prometheus.Registerer
//	if err != nil { ... }
//	pods, err := informer.Typed[*corev1.Pod, *corev1.PodList](f, "v1/pods", informer.Selection{}, client,
//		informer.Options[*corev1.Pod]{Name: "pods"})
//
// Register adds a [Provider], a prometheus.Collector, that reads every
// informer's [informer.Snapshot] (Status, cache size, queue depth, each
// [informer.Registration.Stats]) when Prometheus scrapes, so the informers'
// hot paths are unchanged whether or not metrics are on. The reflector's
// counters (lists, watches, relists by cause, errors by reason, events by
// type, time to first sync) are events rather than state: Register has
// the factory send them to [Provider.Reflector] for every informer without
// reflector metrics of its own ([informer.Factory.ObserveReflectors];
// atomic increments, no allocation). An informer built without a factory
// is added with [Provider.AddInformer] and counts its reflector with
// p.Reflector(name) as its reflector.Config.Metrics.
//
// Every family is labelled with the informer's name and its group, version
// and resource (parsed from the factory's resource name: use a GVR's
// String() or "group/version/resource" to fill all three), as client-go's
// informer metrics are (KEP-4346); handler families add "handler", the
// handler's informer.HandlerOptions.Name, or its index in registration
// order when it has none. The families:
//
//	informer_queued_items                      gauge    keys in the delta FIFO (client-go's name)
//	informer_store_resource_version            gauge    15 low digits of the last synced RV (client-go's name)
//	informer_processing_latency_seconds        histogram  a popped batch applied and handed out (client-go's name)
//	informer_cache_objects                     gauge    cached objects
//	informer_cache_index_values{index}         gauge    distinct values of each cache index
//	informer_synced                            gauge    1 once the first list was processed
//	informer_dropped_objects_total             counter  objects refused by Transform or of the wrong type
//	informer_reflector_phase{phase}            gauge    1 for the current phase (listing, streaming, watching, backoff, stopped)
//	informer_reflector_consecutive_failures    gauge    failed attempts since the last success
//	informer_reflector_last_error{reason}      gauge    1 with the last error's reason, while there is one
//	informer_reflector_lists_total             counter  list requests (pages)
//	informer_reflector_watches_total           counter  watch requests, streaming lists included
//	informer_reflector_relists_total{cause}    counter  list cycles by cause (None: the first)
//	informer_reflector_errors_total{reason}    counter  errors by reason
//	informer_reflector_watch_events_total{type} counter  watch events by type
//	informer_reflector_first_sync_seconds      gauge    start of the first list to its hand-over to the store
//	informer_handler_pending{handler}          gauge    entries waiting for the handler
//	informer_handler_oldest_pending_seconds    gauge    age of the oldest waiting entry
//	informer_handler_busy_seconds              gauge    time running without a break
//	informer_handler_processed_total           counter  handler calls
//	informer_handler_coalesced_total           counter  notifications folded into a pending entry
//	informer_handler_panics_total              counter  handler calls that panicked
//	informer_handler_duration_seconds_total    counter  time spent in the handler
//	informer_handler_synced                    gauge    1 once the handler had the initial list
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
