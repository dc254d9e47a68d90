package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/reflector"
)

const watchSynopsis = `Watch a resource through a listwatch informer, printing every change like 'kubectl get -w'.

Usage:
  listwatch watch RESOURCE [-n NAMESPACE | -A] [-l SELECTOR] [--field-selector SELECTOR] [flags]

Examples:
  listwatch watch pods -A
  listwatch watch cm -n kube-system -l app=web
  listwatch watch deployments.apps --metadata --watch-only
`

// watchFlags are the flags of the watch command.
type watchFlags struct {
	kube          kubeFlags
	namespace     string
	allNamespaces bool
	labelSel      string
	fieldSel      string
	metadataOnly  bool
	watchOnly     bool
	statsInterval time.Duration
	duration      time.Duration
	pageSize      int64
}

func (w *watchFlags) parse(args []string, stdout io.Writer) (string, error) {
	fs := newFlagSet("watch", watchSynopsis)
	w.kube.register(fs)
	fs.StringVarP(&w.namespace, "namespace", "n", "", "the namespace to watch (default: the kubeconfig context's)")
	fs.BoolVarP(&w.allNamespaces, "all-namespaces", "A", false, "watch every namespace")
	fs.StringVarP(&w.labelSel, "selector", "l", "", "label selector, e.g. -l app=web,tier!=db")
	fs.StringVar(&w.fieldSel, "field-selector", "", "field selector, e.g. --field-selector status.phase=Running")
	fs.BoolVar(&w.metadataOnly, "metadata", false, "cache only metadata (the metadata client), not whole objects")
	fs.BoolVar(&w.watchOnly, "watch-only", false, "print only changes after the initial list")
	fs.DurationVar(&w.statsInterval, "stats-interval", 30*time.Second, "how often to print statistics to stderr (0: only at exit)")
	fs.DurationVar(&w.duration, "duration", 0, "stop after this long (0: until interrupted)")
	fs.Int64Var(&w.pageSize, "chunk-size", 500, "page size of the initial list (0: unpaginated)")
	if err := parseFlags(fs, "watch", args, stdout); err != nil {
		return "", err
	}
	switch {
	case fs.NArg() == 0:
		return "", &usageError{cmd: "watch", err: errors.New("you must specify the type of resource to watch, e.g. 'listwatch watch pods'")}
	case fs.NArg() > 1:
		return "", &usageError{cmd: "watch", err: fmt.Errorf("watch takes one resource, got %q", fs.Args())}
	case w.allNamespaces && fs.Changed("namespace"):
		return "", &usageError{cmd: "watch", err: errors.New("--namespace and --all-namespaces are mutually exclusive")}
	case w.statsInterval < 0 || w.duration < 0 || w.pageSize < 0:
		return "", &usageError{cmd: "watch", err: errors.New("--stats-interval, --duration and --chunk-size must not be negative")}
	}
	return fs.Arg(0), nil
}

func runWatchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var w watchFlags
	resource, err := w.parse(args, stdout)
	if err != nil {
		return err
	}
	cfg, ns, err := w.kube.restConfig()
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(w.kube.withTimeout(cfg))
	if err != nil {
		return err
	}
	// Ask for the version first: an unreachable server fails here with one
	// clear error rather than discovery's retries.
	if _, err := disc.ServerVersion(); err != nil {
		return connectionError(cfg.Host, err)
	}
	res, err := resolveResource(disc, resource)
	if err != nil {
		return connectionError(cfg.Host, err)
	}
	if w.namespace != "" {
		ns = w.namespace
	}
	if w.allNamespaces || !res.Namespaced {
		ns = ""
	}
	o := watchOptions{
		name: res.GVR.GroupResource().String(), namespace: ns, allNamespaces: w.allNamespaces || !res.Namespaced,
		label: w.labelSel, field: w.fieldSel, watchOnly: w.watchOnly, statsInterval: w.statsInterval,
		duration: w.duration, pageSize: w.pageSize,
	}
	return startWatch(ctx, cfg, res, w.metadataOnly, o, stdout, stderr)
}

// startWatch builds the dynamic or metadata source and runs the watch.
func startWatch(ctx context.Context, cfg *rest.Config, res resolved, metadataOnly bool, o watchOptions, stdout, stderr io.Writer) error {
	if metadataOnly {
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			return err
		}
		src := reflector.FromClient[*metav1.PartialObjectMetadataList](mc.Resource(res.GVR).Namespace(o.namespace))
		return runWatch[*metav1.PartialObjectMetadata](ctx, src, o, stdout, stderr)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	src := reflector.FromClient[*unstructured.UnstructuredList](dc.Resource(res.GVR).Namespace(o.namespace))
	return runWatch[*unstructured.Unstructured](ctx, src, o, stdout, stderr)
}
