// Command secret-digest runs the digest operator of
// examples/operator against the cluster of a kubeconfig:
//
//	go run ./examples/operator/cmd/secret-digest -kubeconfig ~/.kube/config -namespace demo
//	go run ./examples/operator/cmd/secret-digest -informers=client-go ...
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/listwatch/listwatch/examples/operator"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "secret-digest:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("secret-digest", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "path to a kubeconfig (empty: in-cluster)")
	opts := operator.Options{Informers: operator.Listwatch}
	fs.StringVar(&opts.Namespace, "namespace", "", "namespace to operate in (empty: all)")
	fs.Var(&opts.Informers, "informers", `informer implementation: "listwatch" or "client-go"`)
	fs.BoolVar(&opts.StripManagedFields, "strip-managed-fields", false, "drop managedFields before caching")
	klog.InitFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	opts.Config = cfg
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := klog.Background()
	// controller-runtime's sources log through its global logger.
	ctrllog.SetLogger(logger)
	ctx = klog.NewContext(ctx, logger)
	mgr, err := operator.NewManager(ctx, opts)
	if err != nil {
		return err
	}
	logger.Info("starting", "informers", opts.Informers.String(), "namespace", opts.Namespace)
	return mgr.Start(ctx)
}
