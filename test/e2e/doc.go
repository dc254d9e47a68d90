// Package e2e is listwatch's end-to-end suite: Ginkgo specs that run
// against a real kube-apiserver and etcd started on loopback by
// internal/testing/testapiserver.
//
// # Usage
//
// Build the binaries once (a few minutes cold, instant afterwards), then
// run the suite:
//
//	hack/build-apiserver.sh
//	go test -race -count=1 ./test/e2e/... -ginkgo.v
//
// The suite is skipped under go test -short. LISTWATCH_E2E_CHURN (a Go
// duration, default 2m) sets how long the churn spec writes.
//
// Most specs run listwatch's informer and client-go's
// cache.NewSharedIndexInformer side by side on the same namespace, each
// through its own counting http.RoundTripper, and record objects, handler
// calls, requests and times; AfterSuite prints the table.
//
// # Concurrency
//
// One server is started in BeforeSuite and shared by every spec; each spec
// works in its own generated namespace so specs never see each other's
// objects. Specs run serially (the suite does not use ginkgo -p).
//
// # Testing
//
// Add a spec file per feature (watch_test.go, informer_test.go, ...) with a
// Describe block; use the package-level server from e2e_suite_test.go
// through newNamespace and the admin/unprivileged configs, take the spec's
// SpecContext as the context, and wait with Eventually rather than sleeps.
// startBoth, awaitConverged and record are the side-by-side harness;
// requestCounter.partition cuts one client off from the server.
package e2e
