// Command live-operator runs the operator of examples/liveoperator against
// the cluster of a kubeconfig: it reconciles the Pods of the namespaces
// the ConfigMap -config lists (key "namespaces", comma-separated), and
// follows every edit of it without a restart:
//
//	kubectl create configmap live-operator -n default --from-literal=namespaces=team-a
//	go run ./examples/liveoperator/cmd/live-operator -kubeconfig ~/.kube/config -config default/live-operator
//	kubectl patch configmap live-operator -n default -p '{"data":{"namespaces":"team-a,team-b"}}'
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/listwatch/listwatch/examples/liveoperator"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "live-operator:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("live-operator", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "path to a kubeconfig (empty: in-cluster)")
	config := fs.String("config", "default/live-operator", "namespace/name of the ConfigMap listing the namespaces")
	klog.InitFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	ns, name, ok := strings.Cut(*config, "/")
	if !ok {
		return fmt.Errorf("-config %q is not namespace/name", *config)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := klog.Background()
	ctrllog.SetLogger(logger)
	ctx = klog.NewContext(ctx, logger)
	op, err := liveoperator.New(ctx, liveoperator.Options{
		Config: cfg, ConfigNamespace: ns, ConfigName: name,
		Reconciled: func(key string, exists bool) { logger.Info("Reconciled", "pod", key, "exists", exists) },
		Changed: func(nss []string, err error) {
			if err == nil {
				logger.Info("Namespaces changed", "namespaces", nss)
			}
		},
	})
	if err != nil {
		return err
	}
	return op.Run(ctx)
}
