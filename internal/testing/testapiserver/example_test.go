package testapiserver_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// The options map one to one onto kube-apiserver flags.
func ExampleOptions_APIServerArgs() {
	opts := testapiserver.Options{
		DisableWatchCache:      true,
		EtcdCompactionInterval: 10 * time.Second,
		WatchList:              testapiserver.FeatureDisabled,
	}
	for _, arg := range opts.APIServerArgs() {
		fmt.Println(arg)
	}
	// Output:
	// --watch-cache=false
	// --etcd-compaction-interval=10s
	// --feature-gates=WatchList=false
}

// A typical integration test: start a server, talk to it as the admin,
// restart it, and talk to it again with the same configuration.
//
// It has no Output, so go test compiles it without running it: it needs a
// *testing.T, which an example does not get, and kube-apiserver and etcd
// binaries (built by hack/build-apiserver.sh, minutes the first time),
// and what it would print (a server version, ports) is not fixed.
// TestServerKillRestartKeepsDataAndConfigs goes through the same steps
// (killing the server before the restart) and checks that the data and
// the admin configuration survive.
func ExampleStart() {
	var t *testing.T // the test's *testing.T
	srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	_, _ = client.Discovery().ServerVersion()
	if err := srv.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, _ = client.Discovery().ServerVersion()
}
