package main

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/examples/reconciler"
)

// demoCluster is what the demo needs from a cluster, simulated or real.
type demoCluster struct {
	desc   string                         // shown in the banner
	source cache.ListerWatcherWithContext // the ConfigMaps the controller caches
	writer reconciler.Writer              // the controller's writes
	// seed creates n ConfigMaps before the controller starts.
	seed func(ctx context.Context, n int) error
	// step performs one churn write; errors (conflicts with the
	// controller, say) are counted, not fatal.
	step func(ctx context.Context) error
	// faults injects faults until ctx ends, logging each; nil: none.
	faults func(ctx context.Context, start time.Time, log io.Writer)
	// heal removes every fault (the server is up, nothing fails).
	heal func()
	// list reads the ConfigMaps from the server (a consistent read).
	list func(ctx context.Context) (*corev1.ConfigMapList, error)
	// serverStats is a one-line report of the server side, or "".
	serverStats func() string
	// cleanup removes what the demo created; nil: nothing to do.
	cleanup func(ctx context.Context, log io.Writer) error
}

func (c *demoCluster) close(log io.Writer) {
	if c.cleanup == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.cleanup(ctx, log); err != nil {
		fmt.Fprintf(log, "cleanup failed: %v\n", err)
	}
}

// sourceConfigMap is a demo object: two in three are labelled for the
// mirror controller.
func sourceConfigMap(namespace, name string, n int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{reconciler.SourceLabel: fmt.Sprint(n%3 != 0), "app": "listwatch-demo"}},
		Data: map[string]string{"n": fmt.Sprint(n), "color": []string{"red", "green", "blue"}[n%3]},
	}
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
