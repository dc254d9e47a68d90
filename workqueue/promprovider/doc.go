// Package promprovider exports workqueue metrics to Prometheus. Its Provider
// implements client-go's workqueue.MetricsProvider, so it serves both
// listwatch queues and client-go queues (workqueue.SetProvider).
//
// # Usage
//
//	p, err := promprovider.New(promprovider.Options{Registerer: registry})
//	if err != nil { ... }
//	q := workqueue.New(ctx, workqueue.Options[string]{Name: "pods", MetricsProvider: p})
//
// The metric names match the ones Kubernetes components export
// (workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds, workqueue_retries_total),
// each labelled with the queue name.
//
// # Concurrency
//
// A Provider and the metrics it returns are safe for concurrent use.
//
// # Testing
//
// Register with a fresh prometheus.NewRegistry() and read values with
// prometheus/testutil, as provider_test.go does.
package promprovider
