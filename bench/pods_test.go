package bench

import (
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// corpusPods is the size of the shared pod corpus (objects.RealisticPod,
// objects.PlainPod): the largest scenario (reads during writes) uses all of
// it, the others a prefix.
const (
	corpusPods      = 160_000
	corpusNamespace = objects.RealisticNamespaces
)

// corpus is built once per test binary: corpusPods pods as a list (values,
// as a decoded PodList holds them) and three later versions of each of the
// first steadyPods, as shallow copies that differ in resourceVersion and
// one label (the specs are shared: nobody modifies them).
type corpus struct {
	list []corev1.Pod
	gens [3][]*corev1.Pod
}

const steadyPods = 100_000

var theCorpus = sync.OnceValue(func() *corpus {
	c := &corpus{list: make([]corev1.Pod, corpusPods)}
	for i := range c.list {
		c.list[i] = *objects.RealisticPod(i, objects.PlainPod)
	}
	for g := range c.gens {
		c.gens[g] = make([]*corev1.Pod, steadyPods)
		for i := range c.gens[g] {
			c.gens[g][i] = nextVersion(&c.list[i], g+1)
		}
	}
	return c
})

// nextVersion returns a shallow copy of p at generation gen.
func nextVersion(p *corev1.Pod, gen int) *corev1.Pod {
	q := *p
	q.ResourceVersion = strconv.Itoa(1_000_000*gen + atoi(p.ResourceVersion))
	q.Labels = make(map[string]string, len(p.Labels)+1)
	for k, v := range p.Labels {
		q.Labels[k] = v
	}
	q.Labels["gen"] = strconv.Itoa(gen)
	return &q
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
