// Package kcm runs kube-controller-manager v1.37.2 twice, as Kubernetes
// releases it and with its cmd/kube-controller-manager/app importing
// listwatch's informers and metadatainformer packages instead of
// client-go's (nothing else of it changes; hack/build-kcm.sh builds both
// from the Go module proxy), against a real kube-apiserver of the same
// release holding a cluster written the way a cluster writes it, and
// compares what the two leave on the server.
//
// The harness writes what a cluster's users write: nodes (Ready, with
// Leases it renews, as kubelets do), namespaces with Deployments (each
// with a Service, a PodDisruptionBudget and an operator's custom resource
// it owns), StatefulSets, ConfigMaps and Secrets, Jobs, a CronJob and two
// ResourceQuotas (object counts; compute for the pods that do not end by
// themselves, so that the CronJob's pods, which come and go with the
// clock, do not move what the runs compare). The controller manager writes the rest: ReplicaSets,
// Pods, EndpointSlices, the Jobs of the CronJob, service accounts, the
// root CA ConfigMap, quota usage, disruption budgets' status. An agent
// plays the scheduler and the kubelets: it binds every pod to a node,
// reports it Running and Ready with an IP (a Job's pods run to
// completion), and deletes for good the pods being deleted.
//
// Run takes one build through its phases (Phases): the initial sync,
// until every workload has converged; every Deployment scaled up or down
// by half; a third of the Deployments and every Job deleted, their
// ReplicaSets, Pods and custom resources left to the garbage collector
// (which follows the custom resource through a metadata-only informer);
// a namespace deleted. After each phase it records the server's state
// (State: generated names replaced by owners and counts), and it measures
// the process: live heap (HeapAlloc after a collection it asks for on
// /debug/pprof), RSS and CPU after the sync and at the end, the time until
// every Deployment is available, how long the garbage collector and the
// namespace controller take, and the distinct error lines of its log.
//
// # Usage
//
//	go test ./test/kcm/                                        # TestControllerManager, Small
//	go test -run '^$' -bench ControllerManager -benchtime 1x -timeout 6h ./test/kcm/   # Full, 3 rounds
//
// LISTWATCH_KCM_BIN names a directory holding the binaries instead of
// building them.
//
// # Concurrency
//
// Run starts two processes (kube-apiserver and etcd, through
// internal/testing/testapiserver) and the controller manager, and the agent's
// goroutines, and stops all of them before it returns.
//
// # Testing
//
// TestControllerManager runs both builds at the Small size (a few hundred
// pods) in make test and requires the same state after every phase and no
// error line in listwatch's log that the stock build's has not (errors
// that come with the timing of a run, such as a requeue because a cache
// was behind the controller's own write or a lost optimistic-concurrency
// race, count as one line each, whichever controller meets them);
// BenchmarkControllerManager runs them at the Full size (20,160 pods) and
// reports the medians of each figure
// (docs/benchmarks/kube-controller-manager.md), with heap profiles of
// each run under KCM_PROFILES (Options.Profiles).
//
// TestForbiddenResource runs both builds through the initial sync as a
// user that may do everything a controller manager does except list the
// custom resource (Options.Forbidden; 403 for its metadata-only
// informers): each must keep running and log the refusal, and they must
// leave the same state. Stock's quota controller then waits for its
// monitors for ever and computes no usage, and so does listwatch's; the
// quotas are not waited for in that test.
package kcm
