// Package testapiserver runs a real etcd and kube-apiserver on loopback for
// integration tests, so listwatch's behaviour can be checked against the
// server it is written for rather than against a fake.
//
// The binaries are built from source by hack/build-apiserver.sh (module
// hack/tools pins k8s.io/kubernetes v1.36.3 and etcd v3.6.8) into a cache
// directory keyed by the pinned versions; the first build takes several
// minutes, later calls return at once.
//
// # Usage
//
//	func TestSomething(t *testing.T) {
//		srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{})
//		if err != nil {
//			t.Fatal(err)
//		}
//		client := kubernetes.NewForConfigOrDie(srv.AdminConfig())
//		...
//	}
//
// Start skips the test under go test -short. Each Server gets fresh ports,
// a fresh etcd data directory, a self-signed serving certificate (the
// returned rest.Configs verify it against the apiserver's own CA), a token
// file with AdminUser (system:masters) and UnprivilegedUser (no RBAC
// bindings), and a service-account signing key. RBAC authorization is on.
//
// Options switch the watch cache off, change the etcd compaction interval,
// force the WatchList feature gate on or off, or append raw flags.
// Kill, Restart and RestartEtcd SIGKILL a child and bring it back on the
// same ports and data, for fault-injection scenarios.
//
// Binaries are found, in order, in Options.BinDir, in the directory named
// by $LISTWATCH_APISERVER_BIN_DIR, or by running hack/build-apiserver.sh
// from the enclosing checkout.
//
// # Concurrency
//
// Server methods are safe for concurrent use; Restart and RestartEtcd hold
// the Server until the child is ready again. Several Servers may run at
// once (in parallel tests or packages): they share nothing but the binary
// cache, whose build is serialised by a lock file.
//
// Children run in their own process group with a parent-death signal on
// Linux, so they die with the test binary even when it is killed or
// panics; Stop (registered with tb.Cleanup) SIGKILLs each group and reaps
// it. No goroutine outlives Stop.
//
// # Testing
//
// The pure parts (flag generation, credentials, ports, process control
// with /bin/sh children, and hack/build-apiserver.sh's caching and locking
// driven by a fake go command) are tested under -short. The tests that start a
// real server need the binaries: run hack/build-apiserver.sh once, then
//
//	go test -race -count=1 ./internal/testing/testapiserver/...
package testapiserver
