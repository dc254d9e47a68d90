package fake

import (
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func TestNewServerRejectsBadOptions(t *testing.T) {
	cases := map[string]Options{
		"negative buffer":  {WatchBufferSize: -1},
		"negative history": {HistorySize: -1},
		"duplicate":        {Resources: []Resource{Pods(), Pods()}},
		"unknown kind":     {Resources: []Resource{{GVR: widgets, Kind: "Widget"}}},
		"no kind":          {Resources: []Resource{{GVR: widgets}}},
	}
	for name, opts := range cases {
		if _, err := NewServer(opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestUnstructuredResource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{Resources: []Resource{{GVR: widgets, Kind: "Widget", Unstructured: true}}})
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		u.SetName("w1")
		mustCreate(t, srv, u)
		lw := srv.ListerWatcher(LWOptions{Resource: widgets})
		list, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
		mustNoErr(t, err)
		ul, ok := list.(*unstructured.UnstructuredList)
		if !ok || ul.GetKind() != "WidgetList" || ul.GetAPIVersion() != "example.com/v1" || len(ul.Items) != 1 {
			t.Fatalf("list = %T %v", list, list)
		}
		w := openWatch(t, lw, metav1.ListOptions{SendInitialEvents: new(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		<-w.ResultChan()
		bm := <-w.ResultChan()
		obj := bm.Object.(*unstructured.Unstructured)
		if obj.GetKind() != "Widget" || obj.GetAPIVersion() != "example.com/v1" || obj.GetResourceVersion() != "1" {
			t.Errorf("bookmark %v lacks the GVK client-go's reflector checks", obj.Object)
		}
	})
}

func TestFieldSelectorLeaveAndEnter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServer(t, Options{})
		lw := srv.ListerWatcher(LWOptions{Resource: podsGVR})
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "0", FieldSelector: "spec.nodeName=n1"})
		p := mustCreate(t, srv, newPod("ns", "a", nil)).(*corev1.Pod)
		p.Spec.NodeName = "n1"
		p = mustUpdate(t, srv, p).(*corev1.Pod)
		p.Spec.NodeName = "n2"
		mustUpdate(t, srv, p)
		got, _ := drain(w)
		equalStrings(t, "events", got, []string{"ADDED ns/a@2", "DELETED ns/a@3"})
	})
}

// TestFakeClockDrivesTime shows a k8s.io/utils fake clock works too.
func TestFakeClockDrivesTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
		srv := newTestServer(t, Options{Clock: clk, BookmarkInterval: time.Minute})
		lw := srv.ListerWatcher(LWOptions{Resource: podsGVR})
		timeout := int64(90)
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
		mustCreate(t, srv, newPod("ns", "a", nil))
		synctest.Wait()
		clk.Step(time.Minute)
		got, _ := drain(w)
		clk.Step(30 * time.Second)
		_, closed := drain(w)
		equalStrings(t, "events", got, []string{"ADDED ns/a@1", "BOOKMARK @1"})
		if !closed {
			t.Errorf("not closed after timeoutSeconds on the fake clock")
		}
	})
}
