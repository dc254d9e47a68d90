package fake

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

var podsGVR = Pods().GVR

func newTestServer(t *testing.T, opts Options) *Server {
	t.Helper()
	return NewTestServer(t, opts)
}

func newPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func mustCreate(t *testing.T, srv *Server, obj runtime.Object) runtime.Object {
	t.Helper()
	out, err := srv.Create(t.Context(), obj)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return out
}

func mustUpdate(t *testing.T, srv *Server, obj runtime.Object) runtime.Object {
	t.Helper()
	out, err := srv.Update(t.Context(), obj)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return out
}

func mustDelete(t *testing.T, srv *Server, obj runtime.Object) runtime.Object {
	t.Helper()
	out, err := srv.Delete(t.Context(), obj)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	return out
}

// relabel updates ns/name to carry labels.
func relabel(t *testing.T, srv *Server, ns, name string, labels map[string]string) runtime.Object {
	t.Helper()
	return mustUpdate(t, srv, newPod(ns, name, labels))
}

// describe renders an object as "ns/name@rv" (bookmarks as "@rv", with
// "+end" for the initial-events-end annotation).
func describe(obj runtime.Object) string {
	if st, ok := obj.(*metav1.Status); ok {
		return fmt.Sprintf("%d %s: %s", st.Code, st.Reason, st.Message)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	s := key(m.GetNamespace(), m.GetName()) + "@" + m.GetResourceVersion()
	if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
		s += "+end"
	}
	return s
}

func describeEvent(ev watch.Event) string { return string(ev.Type) + " " + describe(ev.Object) }

// listKeys renders a list as "ns/name@rv ..." plus its metadata.
func listKeys(t *testing.T, list runtime.Object) string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatalf("ExtractList: %v", err)
	}
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = describe(it)
	}
	lm, _ := meta.ListAccessor(list)
	return fmt.Sprintf("rv=%s [%s]", lm.GetResourceVersion(), strings.Join(parts, " "))
}

// drain returns the events a watch delivers until it has nothing more to
// deliver right now (must run in a synctest bubble); closed reports whether
// its channel closed.
func drain(w watch.Interface) (evs []string, closed bool) {
	for {
		synctest.Wait()
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs, true
			}
			evs = append(evs, describeEvent(ev))
		default:
			return evs, false
		}
	}
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got: %q\nwant: %q", what, got, want)
	}
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return ctx, cancel
}

func encodeContinueRaw(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
