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
