// Command listwatch watches Kubernetes resources through listwatch's
// informers and runs a self-checking demo controller.
//
// # Usage
//
//	listwatch demo [--duration 60s] [--kubeconfig FILE] [--context NAME] [--listen ADDR]
//	listwatch watch RESOURCE [-n NS | -A] [-l SELECTOR] [--field-selector SEL]
//	                [--metadata] [--watch-only] [--stats-interval 30s]
//	                [--kubeconfig FILE] [--context NAME]
//
// demo without --kubeconfig or --context runs against an embedded simulated
// cluster (fake.Server): seeded ConfigMap churn, injected faults (server
// down and up, a compaction that forces a 410 relist, 429s), the mirror
// controller of examples/reconciler, a status line every second, a summary
// and a final check that the informer's cache equals the server. With
// --kubeconfig (or --context, which reads $KUBECONFIG) it does the same in a
// namespace of its own on a real cluster, and deletes that namespace at the
// end. A $KUBECONFIG in the environment alone never selects a real cluster.
// With --listen ADDR it also serves, while it runs, the informers' status
// page (statuspage.Handler) at / and Prometheus metrics
// (informer/promprovider, plus the Go runtime's) at /metrics.
//
// watch resolves RESOURCE (pods, cm, deployments.apps, deploy.v1.apps) by
// discovery as kubectl does, caches it through the dynamic client (or, with
// --metadata, the metadata client), prints every event, and reports on
// stderr the progress of the initial list and periodic statistics.
//
// Flags and errors follow kubectl: "error: ..." on stderr and exit status 1
// for a bad flag, an unknown resource, an unreachable server or an initial
// sync refused by the server (forbidden, unauthorized).
//
// # Concurrency
//
// Every command runs one informer (its reflector, its processing goroutine
// and one goroutine per handler) plus, for demo, the controller's workers,
// the churn writer and the fault injector. Output from all of them goes
// through one mutex-guarded writer so lines never interleave. Interrupting
// (SIGINT, SIGTERM) cancels the context: demo still prints its summary and
// cleans up; watch prints its final statistics.
//
// # Testing
//
// The tests call run with argument lists and buffers and assert exit codes
// and output: flag errors, an unreachable server, watch and demo against
// fake.Server under testing/synctest (virtual time, so a 20-second demo takes
// milliseconds), and watch and demo against a real kube-apiserver from
// internal/testing/testapiserver (skipped under -short).
package main
