// Command replica runs one replica of the crsharded example (a
// controller-runtime manager on crcache's sharded cache) and prints its
// report as JSON lines (crsharded.Event) on standard output, its log on
// standard error. SIGTERM or SIGINT stops it gracefully: the manager
// stops its controller, then its cache, then the cache leaves the ring.
//
//	replica -kubeconfig kc -namespace demo -ring cms -identity r0
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/listwatch/listwatch/examples/crsharded"
	"github.com/listwatch/listwatch/shard"
)

func main() {
	var (
		namespace = flag.String("namespace", "", "namespace of the ConfigMaps and the ring's Leases (required)")
		ring      = flag.String("ring", "cms", "ring name")
		identity  = flag.String("identity", "", "identity in the ring (default POD_NAME, else the host name)")
		slices    = flag.Int("slices", 0, "slices of the hash space (0: the package default)")
		lease     = flag.Duration("lease-duration", 0, "Lease duration (0: the package default)")
		renew     = flag.Duration("renew-interval", 0, "renewal interval (0: a third of the lease)")
	)
	// -kubeconfig is controller-runtime's flag (ctrl.GetConfig).
	flag.Parse()
	if err := run(crsharded.Options{Namespace: *namespace, Member: shard.MemberOptions{
		Ring: *ring, Identity: *identity, Slices: *slices, LeaseDuration: *lease, RenewInterval: *renew}}); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(1)
	}
}

func run(opts crsharded.Options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 200, 400
	enc := json.NewEncoder(os.Stdout) // one Write per line; Events are serialized
	opts.Events = func(e crsharded.Event) { _ = enc.Encode(e) }
	opts.Logger = logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	ctrl.SetLogger(opts.Logger) // controller-runtime's global logger, for its sources
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return crsharded.Run(ctx, cfg, opts)
}
