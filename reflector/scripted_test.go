package reflector

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// scriptedLW is a lister-watcher that answers from a script, in order, and
// records the options of every call. A call beyond the script fails the
// test and answers a 503.
type scriptedLW struct {
	t     *testing.T
	mu    sync.Mutex
	calls []string
	steps []func(context.Context, metav1.ListOptions) (runtime.Object, watch.Interface, error)
}

func newScriptedLW(t *testing.T) *scriptedLW { return &scriptedLW{t: t} }

// list scripts the answer to the next call, which must be a list.
func (s *scriptedLW) list(obj runtime.Object, err error) {
	s.script(func(context.Context, metav1.ListOptions) (runtime.Object, watch.Interface, error) {
		return obj, nil, err
	})
}

// watch scripts the answer to the next call, which must be a watch.
func (s *scriptedLW) watch(w watch.Interface, err error) {
	s.script(func(context.Context, metav1.ListOptions) (runtime.Object, watch.Interface, error) { return nil, w, err })
}

// hanging scripts a call (a list or a watch) that never answers until its
// context is cancelled; abandoned is closed then.
func (s *scriptedLW) hanging() (abandoned <-chan struct{}) {
	ch := make(chan struct{})
	s.script(func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, watch.Interface, error) {
		<-ctx.Done()
		close(ch)
		return nil, nil, ctx.Err()
	})
	return ch
}

func (s *scriptedLW) script(f func(context.Context, metav1.ListOptions) (runtime.Object, watch.Interface, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, f)
}

func (s *scriptedLW) next(ctx context.Context, call string, opts metav1.ListOptions) (runtime.Object, watch.Interface, error) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	if len(s.steps) == 0 {
		s.mu.Unlock()
		s.t.Errorf("unscripted call: %s", call)
		return nil, nil, errorFor("503", 0)
	}
	f := s.steps[0]
	s.steps = s.steps[1:]
	s.mu.Unlock()
	return f(ctx, opts)
}

func (s *scriptedLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, w, err := s.next(ctx, List{Options: opts}.String(), opts)
	if w != nil {
		s.t.Errorf("scripted a watch, got a list with %v", opts)
	}
	return obj, err
}

func (s *scriptedLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	obj, w, err := s.next(ctx, Watch{Options: opts}.String(), opts)
	if obj != nil {
		s.t.Errorf("scripted a list, got a watch with %v", opts)
	}
	return w, err
}

func (s *scriptedLW) history() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func podList(rv, cont string, names ...string) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, n := range names {
		l.Items = append(l.Items, *objects.Pod("ns", n, objects.RV(rv)))
	}
	return l
}

func newFakeWatch() *watch.FakeWatcher { return watch.NewFakeWithChanSize(16, false) }

func statusObject(code string) *metav1.Status {
	return errorObject(errorFor(code, 0)).(*metav1.Status)
}

func diffLines(got, want []string) string {
	if fmt.Sprint(got) == fmt.Sprint(want) {
		return ""
	}
	var b []byte
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "! "
		}
		b = fmt.Appendf(b, "%s%-50s | %s\n", mark, g, w)
	}
	return "got | want\n" + string(b)
}
