package conformance

import (
	"fmt"
	"os"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// eventTimeout bounds every wait for a watch event.
const eventTimeout = 10 * time.Second

// variant is one Cluster implementation the specs are registered for.
type variant struct {
	// name labels the Describe container.
	name string
	// fake marks the fake variant, whose known differences are Pending.
	fake bool
	// cluster returns the Cluster for the current spec; it may Skip.
	cluster func(ctx SpecContext) Cluster
}

// it registers a spec that both implementations pass.
func (v variant) it(text string, body func(ctx SpecContext)) {
	It(text, body)
}

// runFakeDiffers is the environment variable that, set to 1, runs the
// fake's known-different specs instead of marking them Pending: the way to
// check a fix in fake/ (the spec must then pass and lose its marker).
//
//lint:ignore U1000 kept for the next difference the suite finds
const runFakeDiffers = "LISTWATCH_CONFORMANCE_RUN_FAKE_DIFFERS"

// itFakeDiffers registers a spec that kube-apiserver passes and the fake
// does not yet: Pending for the fake, with the difference in its text.
//
//lint:ignore U1000 kept for the next difference the suite finds
func (v variant) itFakeDiffers(difference, text string, body func(ctx SpecContext)) {
	if v.fake && os.Getenv(runFakeDiffers) != "1" {
		It(text+" [fake differs: "+difference+"]", Pending, Label("fake-differs"), body)
		return
	}
	It(text, Label("fake-differs"), body)
}

// env is the per-spec state: the cluster and a namespace of the spec's own.
type env struct {
	c  Cluster
	ns string
}

func (e *env) setUp(ctx SpecContext, c Cluster) {
	GinkgoHelper()
	e.c = c
	ns, err := c.NewNamespace(ctx)
	Expect(err).NotTo(HaveOccurred())
	e.ns = ns
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.DeleteNamespace(ctx, ns)).To(Succeed())
	})
}

// create makes a ConfigMap with the given labels in the spec's namespace.
func (e *env) create(ctx SpecContext, name string, labels map[string]string) *corev1.ConfigMap {
	GinkgoHelper()
	cm, err := e.c.CreateConfigMap(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: labels},
	})
	Expect(err).NotTo(HaveOccurred())
	return cm
}

// createAll makes unlabelled ConfigMaps in the order given and returns their
// resource versions in that order.
func (e *env) createAll(ctx SpecContext, names ...string) []string {
	GinkgoHelper()
	rvs := make([]string, len(names))
	for i, n := range names {
		rvs[i] = e.create(ctx, n, nil).ResourceVersion
	}
	return rvs
}

// update sets cm's labels and data and writes it.
func (e *env) update(ctx SpecContext, cm *corev1.ConfigMap, labels, data map[string]string) *corev1.ConfigMap {
	GinkgoHelper()
	cm = cm.DeepCopy()
	cm.Labels, cm.Data = labels, data
	out, err := e.c.UpdateConfigMap(ctx, cm)
	Expect(err).NotTo(HaveOccurred())
	return out
}

func (e *env) remove(ctx SpecContext, name string) {
	GinkgoHelper()
	Expect(e.c.DeleteConfigMap(ctx, e.ns, name, nil)).To(Succeed())
}

func (e *env) list(ctx SpecContext, opts metav1.ListOptions) *corev1.ConfigMapList {
	GinkgoHelper()
	l, err := e.c.ListConfigMaps(ctx, e.ns, opts)
	Expect(err).NotTo(HaveOccurred())
	return l
}

// watch opens a watch that the spec's cleanup stops.
func (e *env) watch(ctx SpecContext, opts metav1.ListOptions) watch.Interface {
	GinkgoHelper()
	w, err := e.c.WatchConfigMaps(ctx, e.ns, opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	return w
}

// items renders a list's items as "name@rv" in list order.
func items(l *corev1.ConfigMapList) []string {
	out := make([]string, len(l.Items))
	for i, it := range l.Items {
		out[i] = it.Name + "@" + it.ResourceVersion
	}
	return out
}

// at renders a written object as "name@rv".
func at(cm *corev1.ConfigMap) string { return cm.Name + "@" + cm.ResourceVersion }

// describe renders a watch event as "TYPE name@rv" (plus "app=" label when
// set); a bookmark as "BOOKMARK @rv" and an error as "ERROR code reason".
func describe(ev watch.Event) string {
	switch o := ev.Object.(type) {
	case *corev1.ConfigMap:
		s := fmt.Sprintf("%s %s@%s", ev.Type, o.Name, o.ResourceVersion)
		if app, ok := o.Labels["app"]; ok {
			s += " app=" + app
		}
		return s
	case *metav1.Status:
		return fmt.Sprintf("%s %d %s", ev.Type, o.Code, o.Reason)
	}
	return fmt.Sprintf("%s %T", ev.Type, ev.Object)
}

// next receives n events from w.
func next(w watch.Interface, n int) []watch.Event {
	GinkgoHelper()
	evs := make([]watch.Event, n)
	for i := range evs {
		Eventually(w.ResultChan()).WithTimeout(eventTimeout).Should(Receive(&evs[i]), "event %d of %d", i+1, n)
	}
	return evs
}

// nextDescribed is next rendered by describe.
func nextDescribed(w watch.Interface, n int) []string {
	GinkgoHelper()
	evs := next(w, n)
	out := make([]string, n)
	for i, ev := range evs {
		out[i] = describe(ev)
	}
	return out
}

// drain collects w's events until the server closes it.
func drain(w watch.Interface, timeout time.Duration) []watch.Event {
	GinkgoHelper()
	var evs []watch.Event
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-deadline:
			Fail(fmt.Sprintf("watch still open after %v; got %d events", timeout, len(evs)))
		}
	}
}

// status extracts the Status of an API error.
func status(err error) metav1.Status {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	var se apierrors.APIStatus
	Expect(err).To(BeAssignableToTypeOf(&apierrors.StatusError{}), "want a StatusError, got %T: %v", err, err)
	se = err.(apierrors.APIStatus)
	return se.Status()
}

// expectStatus checks code, reason, message and details of an API error.
func expectStatus(err error, want metav1.Status) {
	GinkgoHelper()
	got := status(err)
	want.Status = metav1.StatusFailure
	Expect(got).To(Equal(want))
}

// rv parses a resource version.
func rv(s string) uint64 {
	GinkgoHelper()
	n, err := strconv.ParseUint(s, 10, 64)
	Expect(err).NotTo(HaveOccurred(), "resource version %q", s)
	return n
}

// get reads a ConfigMap of the spec's namespace.
func (e *env) get(ctx SpecContext, name string) *corev1.ConfigMap {
	GinkgoHelper()
	cm, err := e.c.GetConfigMap(ctx, e.ns, name)
	Expect(err).NotTo(HaveOccurred())
	return cm
}

// waitCacheHas waits until a resourceVersion "0" list (which a watch cache
// may serve slightly stale) shows want ("name@rv"); the fake is never stale.
func (e *env) waitCacheHas(ctx SpecContext, want string) {
	GinkgoHelper()
	Eventually(func() []string {
		return items(e.list(ctx, metav1.ListOptions{ResourceVersion: "0"}))
	}).WithTimeout(eventTimeout).Should(ContainElement(want))
}
