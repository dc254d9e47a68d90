// Package crsharded is a controller-runtime operator sharded through
// crcache: a manager whose cache (crcache.NewWithOptions with
// Options.Shard) is one member of a ring of replicas, and a controller
// built with controller-runtime's builder that reconciles the ConfigMaps
// of one namespace by writing the hash of each one's data to an
// annotation (sharded.ContentHash, the same as examples/sharded). Each
// replica caches only its slices of the ConfigMaps and its controller
// hears only the keys it owns.
//
// # Usage
//
// The replica command runs one replica and reports what it does as JSON
// lines ([Event]) on standard output:
//
//	replica -kubeconfig kc -namespace demo -ring cms -identity r0
//
// # Concurrency
//
// [Run] blocks until its context ends; Options.Events is called from the
// manager's goroutines, never concurrently.
//
// # Testing
//
// TestManagerProcesses (skipped under -short) runs replica processes on a
// real kube-apiserver (internal/testing/testapiserver) with the
// ShardedListAndWatch gate on: three replicas, kill -9 of one, a fourth
// joining, one leaving gracefully, with ConfigMaps created, updated and
// deleted at each step; after each, every replica caches exactly the
// ConfigMaps it owns and every ConfigMap carries the hash of its final
// data.
//
//	go test -run TestManagerProcesses -v ./examples/crsharded/
package crsharded
