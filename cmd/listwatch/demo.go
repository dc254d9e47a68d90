package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

const demoSynopsis = `Run the example controller (examples/reconciler: it mirrors ConfigMaps labelled mirror=true)
against a simulated cluster with churn and injected faults, print live status, a summary, and check
that the informer's cache equals the server. With --kubeconfig or --context it runs against a real
cluster instead, in a namespace of its own that it deletes at the end.

Usage:
  listwatch demo [flags]

Examples:
  listwatch demo                          # ~60 s against the embedded simulated cluster
  listwatch demo --duration 15s --seed 7
  listwatch demo --kubeconfig ~/.kube/config --duration 30s
  listwatch demo --listen 127.0.0.1:8080  # status page at /, Prometheus metrics at /metrics
`

// maxRate bounds --rate: beyond it the churn ticker's period would round
// to zero.
const maxRate = 100000

// demoFlags are the flags of the demo command.
type demoFlags struct {
	kube      kubeFlags
	namespace string // real clusters: the namespace to create; "" generated
	duration  time.Duration
	interval  time.Duration // status line period
	settle    time.Duration // bound on the final convergence wait
	seed      uint64
	objects   int     // objects created before the controller starts
	rate      float64 // churn writes per second
	workers   int
	faults    bool
	logs      bool   // keep the library's log lines (else the status line sums them up)
	real      bool   // --kubeconfig or --context was given
	listen    string // serve the status page and /metrics on this address; "" none
}

func (d *demoFlags) parse(args []string, stdout io.Writer) error {
	fs := newFlagSet("demo", demoSynopsis)
	fs.DurationVar(&d.duration, "duration", time.Minute, "how long to churn before the final check")
	fs.DurationVar(&d.interval, "status-interval", time.Second, "how often to print the status line")
	fs.DurationVar(&d.settle, "settle-timeout", 30*time.Second, "how long the final check waits for the controller to converge")
	fs.Uint64Var(&d.seed, "seed", 1, "seed of the churn and fault schedule (same seed, same writes)")
	fs.IntVar(&d.objects, "objects", -1, "objects created before the controller starts (default 3000 simulated, 100 real)")
	fs.Float64Var(&d.rate, "rate", 0, "churn writes per second (default 200 simulated, 20 real)")
	fs.IntVar(&d.workers, "workers", 4, "controller workers")
	fs.BoolVar(&d.faults, "faults", true, "inject faults (simulated cluster only)")
	fs.BoolVar(&d.logs, "logs", false, "print the informer's and reflector's log lines to stderr (the status line counts their errors anyway)")
	fs.StringVarP(&d.namespace, "namespace", "n", "", "real clusters: the namespace to create and delete (default listwatch-demo-<random>)")
	fs.StringVar(&d.listen, "listen", "", "while running, serve the informers' status page at / and Prometheus metrics at /metrics on this address (e.g. 127.0.0.1:8080)")
	d.kube.register(fs)
	if err := parseFlags(fs, "demo", args, stdout); err != nil {
		return err
	}
	d.real = fs.Changed("kubeconfig") || fs.Changed("context")
	if err := d.validate(fs); err != nil {
		return &usageError{cmd: "demo", err: err}
	}
	d.defaults()
	return nil
}

func (d *demoFlags) validate(fs *pflag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("demo takes no arguments, got %q", fs.Args())
	case d.duration <= 0 || d.interval <= 0 || d.settle <= 0:
		return errors.New("--duration, --status-interval and --settle-timeout must be positive")
	case d.rate < 0 || d.rate > maxRate || d.workers < 1:
		return fmt.Errorf("--rate must be between 0 and %d and --workers at least 1", maxRate)
	case fs.Changed("namespace") && !d.real:
		return errors.New("--namespace applies to real clusters only: add --kubeconfig or --context")
	}
	return nil
}

func (d *demoFlags) defaults() {
	if d.objects < 0 {
		d.objects = map[bool]int{false: 3000, true: 100}[d.real]
	}
	if d.rate == 0 {
		d.rate = map[bool]float64{false: 200, true: 20}[d.real]
	}
}

func runDemoCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var d demoFlags
	if err := d.parse(args, stdout); err != nil {
		return err
	}
	if !d.logs {
		ctx = klog.NewContext(ctx, logr.Discard())
	}
	var cl *demoCluster
	var err error
	if d.real {
		cl, err = newRealCluster(ctx, &d, stdout)
	} else {
		cl, err = newFakeCluster(&d, stdout)
	}
	if err != nil {
		return err
	}
	defer cl.close(stdout)
	return runDemo(ctx, cl, &d, stdout)
}
