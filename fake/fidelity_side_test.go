package fake

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// The scripted objects are configmaps: pods would bring admission (service
// accounts) and graceful deletion (an extra MODIFIED setting
// deletionTimestamp), which the fake deliberately does not model.

// side is one server under the differential test: the fake or a real
// kube-apiserver, driven through the same calls.
type side struct {
	name   string
	create func(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error)
	update func(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error)
	delete func(ctx context.Context, name string) error
	lw     cache.ListerWatcherWithContext
	// writes are the RVs of this side's writes, in order (w0, w1, ...).
	writes []uint64
	// idle is how long a watch must stay silent to count as drained.
	idle time.Duration
	// compacted makes the server forget its history up to at least rv,
	// returning when that is visible.
	compacted func(t *testing.T, rv string)
}

const fidelityNS = "fidelity"

func fakeSide(t *testing.T) *side {
	return fakeSideWith(t, Options{TooLargeRVTimeout: 50 * time.Millisecond})
}

func fakeSideWith(t *testing.T, opts Options) *side {
	srv := NewTestServer(t, opts)
	asCM := func(o runtime.Object, err error) (*corev1.ConfigMap, error) {
		if err != nil {
			return nil, err
		}
		return o.(*corev1.ConfigMap), nil
	}
	return &side{
		name: "fake",
		create: func(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return asCM(srv.Create(ctx, cm))
		},
		update: func(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return asCM(srv.Update(ctx, cm))
		},
		delete: func(ctx context.Context, name string) error {
			_, err := srv.Delete(ctx, fidelityCM(name, ""))
			return err
		},
		lw:   srv.ListerWatcher(LWOptions{Resource: ConfigMaps().GVR, Namespace: fidelityNS}),
		idle: 20 * time.Millisecond,
		compacted: func(t *testing.T, _ string) {
			// As in etcd, the compaction RV itself stays readable: write once
			// more so that everything so far is strictly older.
			mustCreate(t, srv, fidelityCM("filler", ""))
			mustNoErr(t, srv.Compact(srv.ResourceVersion()))
		},
	}
}

func realSide(t *testing.T) *side {
	return realSideWith(t, testapiserver.Options{})
}

func realSideWith(t *testing.T, opts testapiserver.Options) *side {
	srv, err := testapiserver.Start(t.Context(), t, opts)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fidelityNS}}
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := client.CoreV1().ConfigMaps(fidelityNS)
	s := &side{
		name: "kube-apiserver",
		create: func(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Create(ctx, cm, metav1.CreateOptions{})
		},
		update: func(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Update(ctx, cm, metav1.UpdateOptions{})
		},
		delete: func(ctx context.Context, name string) error {
			return cms.Delete(ctx, name, metav1.DeleteOptions{})
		},
		lw: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return cms.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return cms.Watch(ctx, o)
			},
		},
		idle: time.Second,
	}
	s.compacted = func(t *testing.T, rv string) { waitCompacted(t, s, rv) }
	return s
}

// waitCompacted waits, polling the real server, until an exact list at rv
// is expired (the server compacts etcd every second).
func waitCompacted(t *testing.T, s *side, rv string) {
	for range 60 {
		_, err := s.lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if apierrors.IsResourceExpired(err) {
			return
		}
		if _, err := s.create(t.Context(), fidelityCM(fmt.Sprint("filler", time.Now().UnixNano()), "")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: history of the writes never compacted", s.name)
}

func fidelityCM(name, app string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fidelityNS, Name: name}}
	if app != "" {
		cm.Labels = map[string]string{"app": app}
	}
	return cm
}

// seed performs the scripted writes: a, b, c created (w0-w2), a relabelled
// (w3), b deleted (w4; its RV is learned from a watch).
func (s *side) seed(t *testing.T) {
	ctx := t.Context()
	var first *corev1.ConfigMap
	for _, n := range []string{"a", "b", "c"} {
		p, err := s.create(ctx, fidelityCM(n, "x"))
		mustNoErr(t, err)
		s.record(p.ResourceVersion)
		if first == nil {
			first = p
		}
	}
	a, err := s.create(ctx, fidelityCM("a", "x"))
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("%s: duplicate create: %v %v", s.name, a, err)
	}
	w, err := s.lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: s.rv(2)})
	mustNoErr(t, err)
	defer w.Stop()
	p := first.DeepCopy()
	p.Labels["app"] = "y"
	up, err := s.update(ctx, p)
	mustNoErr(t, err)
	s.record(up.ResourceVersion)
	if _, err := s.update(ctx, first); !apierrors.IsConflict(err) {
		t.Fatalf("%s: stale update: %v", s.name, err)
	}
	mustNoErr(t, s.delete(ctx, "b"))
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			s.record(ev.Object.(*corev1.ConfigMap).ResourceVersion)
			return
		}
	}
	t.Fatalf("%s: no DELETED event for b", s.name)
}

func (s *side) record(rv string) {
	n, _ := strconv.ParseUint(rv, 10, 64)
	s.writes = append(s.writes, n)
}

// rv returns the RV of write i; i beyond the writes means "far future".
func (s *side) rv(i int) string {
	if i >= len(s.writes) {
		return strconv.FormatUint(s.writes[len(s.writes)-1]+1000, 10)
	}
	return strconv.FormatUint(s.writes[i], 10)
}

// norm renders an RV relative to the writes: "w3" if it is write 3's RV,
// "w3+" if it lies after write 3 but before write 4.
func (s *side) norm(rv string) string {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return "?" + rv
	}
	out := "<w0"
	for i, w := range s.writes {
		switch {
		case n == w:
			return fmt.Sprint("w", i)
		case n > w:
			out = fmt.Sprint("w", i, "+")
		}
	}
	return out
}

// floor renders an RV that may legitimately run ahead of the writes (a
// list's or a bookmark's: a real server's etcd also stores other objects)
// as ">=wN".
func (s *side) floor(rv string) string {
	return ">=" + strings.TrimSuffix(s.norm(rv), "+")
}

var digits = regexp.MustCompile(`[0-9]+`)

func (s *side) describeErr(err error) string {
	if err == nil {
		return "no error"
	}
	if st, ok := err.(apierrors.APIStatus); ok {
		status := st.Status()
		out := fmt.Sprintf("%d %s: %s", status.Code, status.Reason, digits.ReplaceAllString(status.Message, "N"))
		if c := status.Continue; c != "" {
			tok, _ := decodeContinue(c)
			out += fmt.Sprintf(" [continue rv=%d start=%q]", tok.RV, tok.Start)
		}
		return out
	}
	return "error: " + err.Error()
}

func (s *side) describeObj(obj runtime.Object) string {
	if st, ok := obj.(*metav1.Status); ok {
		return s.describeErr(&apierrors.StatusError{ErrStatus: *st})
	}
	m, _ := meta.Accessor(obj)
	if m.GetName() == "" { // a bookmark
		out := "@" + s.floor(m.GetResourceVersion())
		if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			out += " end"
		}
		return out
	}
	return m.GetName() + "@" + s.norm(m.GetResourceVersion())
}

func (s *side) list(ctx context.Context, opts metav1.ListOptions) string {
	var pages []string
	for {
		obj, err := s.lw.ListWithContext(ctx, opts)
		if err != nil {
			return strings.Join(append(pages, s.describeErr(err)), " | ")
		}
		items, _ := meta.ExtractList(obj)
		lm, _ := meta.ListAccessor(obj)
		parts := []string{"rv=" + s.floor(lm.GetResourceVersion())}
		for _, it := range items {
			parts = append(parts, s.describeObj(it))
		}
		if rc := lm.GetRemainingItemCount(); rc != nil {
			parts = append(parts, fmt.Sprint("remaining=", *rc))
		}
		pages = append(pages, strings.Join(parts, " "))
		if lm.GetContinue() == "" || opts.Limit == 0 {
			return strings.Join(pages, " | ")
		}
		opts = metav1.ListOptions{Limit: opts.Limit, Continue: lm.GetContinue(), LabelSelector: opts.LabelSelector}
	}
}

// watch renders the events a watch delivers until it is idle for s.idle.
func (s *side) watch(ctx context.Context, opts metav1.ListOptions) string {
	w, err := s.lw.WatchWithContext(ctx, opts)
	if err != nil {
		return s.describeErr(err)
	}
	defer w.Stop()
	var evs []string
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return strings.Join(append(evs, "CLOSED"), ", ")
			}
			evs = append(evs, string(ev.Type)+" "+s.describeObj(ev.Object))
		case <-time.After(s.idle):
			return strings.Join(evs, ", ")
		}
	}
}
