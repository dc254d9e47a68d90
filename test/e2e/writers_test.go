package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// createConfigMaps creates n ConfigMaps named <prefix>-<i> in ns with
// workers concurrent writers and returns how long it took.
func createConfigMaps(ctx context.Context, cs kubernetes.Interface, ns, prefix string, n, workers int) time.Duration {
	GinkgoHelper()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", prefix, i)},
					Data:       map[string]string{"i": strconv.FormatInt(i, 10)},
				}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		Expect(err).NotTo(HaveOccurred())
	}
	return time.Since(start)
}

// churnStats counts the writes a churn made.
type churnStats struct {
	creates, updates, deletes, failed atomic.Int64
}

func (c *churnStats) String() string {
	return fmt.Sprintf("%d creates, %d updates, %d deletes, %d failed",
		c.creates.Load(), c.updates.Load(), c.deletes.Load(), c.failed.Load())
}

func (c *churnStats) writes() int64 {
	return c.creates.Load() + c.updates.Load() + c.deletes.Load()
}

// churn writes to ns at about rate writes per second for d, spread over
// writers goroutines that each own keysPerWriter names (so writers never
// conflict): a missing name is created, an existing one is updated (80%) or
// deleted (20%). Every loop is bounded by d and by rate·d writes. Failed
// writes are counted in stats, not fatal: callers decide what they tolerate.
func churn(ctx context.Context, cs kubernetes.Interface, ns string, d time.Duration, rate, writers, keysPerWriter int, stats *churnStats) {
	perWriter := max(rate/writers, 1)
	budget := int(d.Seconds()*float64(perWriter)) + 1
	interval := time.Second / time.Duration(perWriter)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			exists := make([]bool, keysPerWriter)
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for range budget {
				if ctx.Err() != nil || time.Now().After(deadline) {
					return
				}
				k := rng.IntN(keysPerWriter)
				exists[k] = churnOne(ctx, cs, ns, fmt.Sprintf("churn-%d-%04d", w, k), exists[k], rng, stats)
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
}

// churnOne makes one write to name and returns whether it exists afterwards
// as far as the writer knows.
func churnOne(ctx context.Context, cs kubernetes.Interface, ns, name string, exists bool, rng *rand.Rand, stats *churnStats) bool {
	cms := cs.CoreV1().ConfigMaps(ns)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"v": strconv.FormatUint(rng.Uint64(), 36)},
	}
	switch {
	case !exists:
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			stats.failed.Add(1)
			return false
		}
		stats.creates.Add(1)
		return true
	case rng.IntN(5) == 0:
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			stats.failed.Add(1)
			return true
		}
		stats.deletes.Add(1)
		return false
	default:
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			stats.failed.Add(1)
			return true
		}
		stats.updates.Add(1)
		return true
	}
}

// envDuration reads a duration from the environment variable name, or
// returns def when it is unset.
func envDuration(name string, def time.Duration) time.Duration {
	GinkgoHelper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	Expect(err).NotTo(HaveOccurred(), "%s=%q", name, v)
	Expect(d).To(BeNumerically(">", 0), "%s=%q", name, v)
	return d
}
