// Command replica runs one replica of the sharded example controller
// (package sharded) and prints its report as JSON lines (sharded.Event) on
// standard output. SIGTERM or SIGINT stops it gracefully: it stops handing
// out keys, then releases its Lease.
//
//	replica -kubeconfig kc -namespace demo -ring cms -identity r0
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/listwatch/listwatch/examples/sharded"
)

func main() {
	var (
		kubeconfig = flag.String("kubeconfig", "", "kubeconfig file (required)")
		namespace  = flag.String("namespace", "", "namespace of the ConfigMaps and the ring's Leases (required)")
		ring       = flag.String("ring", "cms", "ring name")
		identity   = flag.String("identity", "", "identity in the ring (default POD_NAME, else the host name)")
		slices     = flag.Int("slices", 0, "slices of the hash space (0: the package default)")
		lease      = flag.Duration("lease-duration", 0, "Lease duration (0: the package default)")
		renew      = flag.Duration("renew-interval", 0, "renewal interval (0: a third of the lease)")
		unsharded  = flag.Bool("unsharded", false, "cache the whole namespace and reconcile nothing (a baseline)")
		stats      = flag.Duration("stats-interval", 0, "time between stats lines")
		fenced     = flag.Bool("fenced", false, "hand over with at most one owner at a time (shard.MemberOptions.Fenced)")
	)
	flag.Parse()
	if err := run(*kubeconfig, sharded.Options{Namespace: *namespace, Ring: *ring, Identity: *identity,
		Slices: *slices, LeaseDuration: *lease, RenewInterval: *renew,
		Unsharded: *unsharded, StatsInterval: *stats, Fenced: *fenced}); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, opts sharded.Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 200, 400
	if opts.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout) // one Write per line; Events are serialized
	opts.Events = func(e sharded.Event) { _ = enc.Encode(e) }
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c, err := sharded.New(ctx, opts)
	if err != nil {
		return err
	}
	err = c.Run(ctx)
	_ = enc.Encode(sharded.Event{T: time.Now().UnixNano(), Ev: "exit"})
	return err
}
