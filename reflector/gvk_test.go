package reflector

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

func widget(kind, name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind(kind)
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

// TestExpectedGVK: with unstructured objects the Go type says nothing, so
// the machine checks the kind and drops strangers, in lists and in watches.
func TestExpectedGVK(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	rec := newRecorder()
	m, err := NewMachine(Config[*unstructured.Unstructured]{ExpectedGVK: &gvk, WatchList: WatchListOff, Metrics: rec})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	m.Start(now)
	out := m.Step(now, ListPage{ResourceVersion: "5",
		Items: []runtime.Object{widget("Widget", "a", "5"), widget("Gadget", "b", "5")}})
	rep, ok := out[1].(Replace[*unstructured.Unstructured])
	if !ok || len(rep.Items) != 1 || rep.Items[0].GetName() != "a" {
		t.Fatalf("effects %v, want the Widget only", out)
	}
	m.Step(now, WatchOpened{})
	out = m.Step(now, WatchEvent{Event: watch.Event{Type: watch.Added, Object: widget("Gadget", "c", "6")}})
	if len(out) != 1 || m.Status().LastSyncResourceVersion != "5" {
		t.Fatalf("a Gadget event gave %v (rv %s), want only an error", out, m.Status().LastSyncResourceVersion)
	}
	if got := rec.counts["error:UnexpectedType"]; got != 2 {
		t.Errorf("UnexpectedType errors = %d, want 2", got)
	}
}
