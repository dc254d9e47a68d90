package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/examples/reconciler"
	"github.com/listwatch/listwatch/reflector"
)

// createdByLabel marks the namespaces the demo creates.
const createdByLabel = "app.kubernetes.io/created-by"

// newRealCluster prepares a demo in a fresh namespace of a real cluster.
// The namespace is created here and deleted by the cluster's cleanup.
func newRealCluster(ctx context.Context, d *demoFlags, log io.Writer) (*demoCluster, error) {
	cfg, _, err := d.kube.restConfig()
	if err != nil {
		return nil, err
	}
	watchCS, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// client-go's default client-side limit (5 QPS, burst 10) would throttle
	// the churn and the controller below the requested rate.
	writeCfg := d.kube.withTimeout(cfg)
	writeCfg.QPS = float32(max(50, 4*d.rate))
	writeCfg.Burst = 2 * int(writeCfg.QPS)
	cs, err := kubernetes.NewForConfig(writeCfg)
	if err != nil {
		return nil, err
	}
	ns := d.namespace
	if ns == "" {
		ns = "listwatch-demo-" + utilrand.String(5)
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{createdByLabel: "listwatch-demo"}}}, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil, fmt.Errorf("namespace %q already exists; the demo only uses a namespace it creates (pick another with -n)", ns)
	case err != nil:
		return nil, connectionError(cfg.Host, fmt.Errorf("creating namespace %q: %w", ns, err))
	}
	fmt.Fprintf(log, "created namespace %s\n", ns)
	ch := &realChurn{cs: cs, ns: ns, rnd: rand.New(rand.NewPCG(d.seed, 0x7265616c))}
	return &demoCluster{
		desc:   fmt.Sprintf("%s, namespace %s (seed %d)", cfg.Host, ns, d.seed),
		source: reflector.FromClient[*corev1.ConfigMapList](watchCS.CoreV1().ConfigMaps(ns)),
		writer: reconciler.ClientsetWriter{Client: cs},
		seed:   ch.seed,
		step:   ch.step,
		list: func(ctx context.Context) (*corev1.ConfigMapList, error) {
			return cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		},
		cleanup: func(ctx context.Context, log io.Writer) error {
			if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(log, "deleted namespace %s\n", ns)
			return nil
		},
	}, nil
}

// realChurn creates, updates and deletes ConfigMaps of one namespace at
// random. It is used from one goroutine.
type realChurn struct {
	cs    kubernetes.Interface
	ns    string
	rnd   *rand.Rand
	names []string // the sources it created and has not deleted
	seq   int
}

func (c *realChurn) seed(ctx context.Context, n int) error {
	for range n {
		if err := c.create(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (c *realChurn) create(ctx context.Context) error {
	c.seq++
	name := fmt.Sprintf("churn-%d", c.seq)
	if _, err := c.cs.CoreV1().ConfigMaps(c.ns).Create(ctx, sourceConfigMap(c.ns, name, c.seq), metav1.CreateOptions{}); err != nil {
		return err
	}
	c.names = append(c.names, name)
	return nil
}

// step is one write: a create (40%, or when nothing is left), an update
// of the data, so the controller must update the mirror (40%), or a
// delete (20%).
func (c *realChurn) step(ctx context.Context) error {
	op := c.rnd.IntN(10)
	if len(c.names) == 0 || op < 4 {
		return c.create(ctx)
	}
	i := c.rnd.IntN(len(c.names))
	cms := c.cs.CoreV1().ConfigMaps(c.ns)
	if op >= 8 {
		name := c.names[i]
		c.names = append(c.names[:i], c.names[i+1:]...)
		return cms.Delete(ctx, name, metav1.DeleteOptions{})
	}
	cm, err := cms.Get(ctx, c.names[i], metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm.Data["n"] = fmt.Sprint(c.rnd.Uint32())
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}
