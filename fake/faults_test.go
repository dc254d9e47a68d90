package fake

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/ptr"
)

func TestFailNextShapesErrorsLikeClientGo(t *testing.T) {
	cases := []struct {
		kind  FailureKind
		check func(error) bool
	}{
		{Forbidden, apierrors.IsForbidden},
		{NotFound, apierrors.IsNotFound},
		{Expired, apierrors.IsResourceExpired},
		{TooManyRequests, func(err error) bool {
			secs, ok := apierrors.SuggestsClientDelay(err)
			return apierrors.IsTooManyRequests(err) && ok && secs == 7
		}},
		{InternalError, apierrors.IsInternalError},
		{ConnectionRefused, func(err error) bool {
			var ue *url.Error
			var oe *net.OpError
			return utilnet.IsConnectionRefused(err) && errors.As(err, &ue) && errors.As(err, &oe) && errors.Is(err, syscall.ECONNREFUSED)
		}},
	}
	for _, tc := range cases {
		srv, lw := seeded(t, Options{})
		if err := srv.FailNext(Failure{Resource: podsGVR, Verbs: VerbList, Times: 2, Kind: tc.kind, RetryAfterSeconds: 7}); err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		for i := range 2 {
			if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); !tc.check(err) {
				t.Errorf("kind %d call %d: err = %#v", tc.kind, i, err)
			}
		}
		if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("kind %d: third call failed: %v", tc.kind, err)
		}
		if got := srv.Stats().Faults; got != 2 {
			t.Errorf("Stats().Faults = %d; want 2", got)
		}
	}
}

func TestFailNextMatchesVerbAndResource(t *testing.T) {
	srv, lw := seeded(t, Options{})
	if err := srv.FailNext(Failure{Resource: ConfigMaps().GVR, Times: 1, Kind: InternalError}); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailNext(Failure{Verbs: VerbWatch, Times: 1, Kind: Forbidden}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("pod list hit a configmap or watch failure: %v", err)
	}
	if _, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "5"}); !apierrors.IsForbidden(err) {
		t.Errorf("watch: %v; want Forbidden", err)
	}
	cms := srv.ListerWatcher(LWOptions{Resource: ConfigMaps().GVR})
	if _, err := cms.ListWithContext(ctx, metav1.ListOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("configmap list: %v; want InternalError", err)
	}
	if err := srv.FailNext(Failure{Times: 0, Kind: Forbidden}); err == nil {
		t.Errorf("Times 0 accepted")
	}
	if err := srv.FailNext(Failure{Times: 1, Kind: ConnectionRefused, InStream: true}); err == nil {
		t.Errorf("in-stream connection refused accepted")
	}
}

// Failures used up one after another fail with their own kinds: a used-up
// Failure's removal does not hand its call the next one's error.
func TestFailNextInOrder(t *testing.T) {
	srv, lw := seeded(t, Options{})
	for _, k := range []FailureKind{Forbidden, NotFound, InternalError} {
		if err := srv.FailNext(Failure{Verbs: VerbList, Times: 1, Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	for i, check := range []func(error) bool{apierrors.IsForbidden, apierrors.IsNotFound, apierrors.IsInternalError} {
		if _, err := lw.ListWithContext(t.Context(), metav1.ListOptions{}); !check(err) {
			t.Errorf("list %d: %v", i, err)
		}
	}
}

// Fault serves the REST verbs: a Failure that names one fails only it,
// once per use; the default Verbs (lists and watches) never reach it; Down
// refuses every verb; the Server's own writes are never faulted.
func TestFaultForRESTVerbs(t *testing.T) {
	srv, lw := seeded(t, Options{})
	if err := srv.FailNext(Failure{Times: 1, Kind: InternalError}); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailNext(Failure{Verbs: VerbCreate | VerbDelete, Resource: podsGVR, Times: 2, Kind: Forbidden}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Fault(VerbGet, podsGVR, "ns"); err != nil {
		t.Errorf("get met a list-and-watch failure: %v", err)
	}
	if err := srv.Fault(VerbCreate, ConfigMaps().GVR, "ns"); err != nil {
		t.Errorf("configmap create met a pod failure: %v", err)
	}
	err := srv.Fault(VerbCreate, podsGVR, "ns")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot create resource "pods"`) {
		t.Errorf("create: %v; want Forbidden naming the verb", err)
	}
	if _, err := srv.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "direct"}}); err != nil {
		t.Errorf("the Server's own Create met a fault: %v", err)
	}
	if err := srv.Fault(VerbDelete, podsGVR, "ns"); !apierrors.IsForbidden(err) {
		t.Errorf("delete: %v; want Forbidden", err)
	}
	if err := srv.Fault(VerbDelete, podsGVR, "ns"); err != nil {
		t.Errorf("third use of a Times 2 failure: %v", err)
	}
	if _, err := lw.ListWithContext(t.Context(), metav1.ListOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("list: %v; want the list-and-watch failure still there", err)
	}
	srv.Down()
	if err := srv.Fault(VerbUpdate, podsGVR, "ns"); !utilnet.IsConnectionRefused(err) {
		t.Errorf("update of a down server: %v; want connection refused", err)
	}
	srv.Up()
	if err := srv.Fault(VerbList|VerbGet, podsGVR, "ns"); err == nil {
		t.Error("Fault accepted two verbs")
	}
}

func TestInStreamFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		if err := srv.FailNext(Failure{Times: 1, Kind: Expired, InStream: true}); err != nil {
			t.Fatal(err)
		}
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5"})
		got, closed := drain(w)
		equalStrings(t, "events", got, []string{"ERROR 410 Expired: The resourceVersion for the provided watch is too old."})
		if !closed {
			t.Errorf("not closed")
		}
	})
}

func TestWatchFaultCloseAfterEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		if err := srv.InjectWatchFault(WatchFault{Times: 1, CloseAfterEvents: 2}); err != nil {
			t.Fatal(err)
		}
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "3"})
		got, closed := drain(w)
		equalStrings(t, "events", got, []string{"MODIFIED ns/a@4", "DELETED ns/b@5"})
		if !closed {
			t.Errorf("not closed after 2 events")
		}
		w = openWatch(t, lw, metav1.ListOptions{ResourceVersion: "3"}) // Times was 1
		if got, closed := drain(w); len(got) != 2 || closed {
			t.Errorf("second watch: %q closed=%v", got, closed)
		}
		_ = srv
	})
}

func TestWatchFaultDropInitialEventsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		if err := srv.InjectWatchFault(WatchFault{Times: 1, DropInitialEventsEnd: true}); err != nil {
			t.Fatal(err)
		}
		opts := metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
		w := openWatch(t, lw, opts)
		got, closed := drain(w)
		equalStrings(t, "streaming list without its end", got, []string{"ADDED ns/a@4", "ADDED ns/c@3"})
		if closed {
			t.Errorf("closed")
		}
		mustCreate(t, srv, newPod("ns", "d", nil))
		got, _ = drain(w)
		equalStrings(t, "live events after the missing end", got, []string{"ADDED ns/d@6"})
		w.Stop()
		w = openWatch(t, lw, opts) // Times was 1
		got, _ = drain(w)
		equalStrings(t, "next streaming list", got, []string{"ADDED ns/a@4", "ADDED ns/c@3", "ADDED ns/d@6", "BOOKMARK @6+end"})
		w.Stop()
	})
}

func TestWatchFaultCloseAtAndDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		start := time.Now()
		if err := srv.InjectWatchFault(WatchFault{Resource: podsGVR, CloseAt: start.Add(30 * time.Second), Delay: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5"})
		mustCreate(t, srv, newPod("ns", "d", nil))
		if got, _ := drain(w); len(got) != 0 {
			t.Errorf("delayed event arrived early: %q", got)
		}
		time.Sleep(10 * time.Second)
		got, _ := drain(w)
		equalStrings(t, "after delay", got, []string{"ADDED ns/d@6"})
		time.Sleep(20 * time.Second)
		if _, closed := drain(w); !closed {
			t.Errorf("not closed at CloseAt")
		}
	})
}

func TestStallHoldsEventsAndBookmarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{BookmarkInterval: time.Second, WatchBufferSize: 3})
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5", AllowWatchBookmarks: true})
		srv.Stall(podsGVR)
		mustCreate(t, srv, newPod("ns", "d", nil))
		time.Sleep(5 * time.Second)
		if got, _ := drain(w); len(got) != 0 {
			t.Errorf("stalled watch delivered %q", got)
		}
		srv.Unstall(podsGVR)
		got, _ := drain(w)
		equalStrings(t, "after unstall", got, []string{"ADDED ns/d@6"})
		// Overflow while stalled closes the watch.
		srv.Stall(GVR{})
		for _, n := range []string{"e", "f", "g", "h"} {
			mustCreate(t, srv, newPod("ns", n, nil))
		}
		if _, closed := drain(w); !closed {
			t.Errorf("overflowing watch not closed")
		}
		if got := srv.Stats().SlowWatchesClosed; got != 1 {
			t.Errorf("SlowWatchesClosed = %d", got)
		}
	})
}

func TestDownAndUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{})
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5"})
		srv.Down()
		if _, closed := drain(w); !closed {
			t.Errorf("watch survived Down")
		}
		if _, err := lw.ListWithContext(t.Context(), metav1.ListOptions{}); !utilnet.IsConnectionRefused(err) {
			t.Errorf("list while down: %v", err)
		}
		if _, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{}); !utilnet.IsConnectionRefused(err) {
			t.Errorf("watch while down: %v", err)
		}
		mustCreate(t, srv, newPod("ns", "d", nil)) // writes still work
		srv.Up()
		w = openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5"})
		got, _ := drain(w)
		equalStrings(t, "after up", got, []string{"ADDED ns/d@6"})
		if n := srv.CloseWatches(GVR{}); n != 1 {
			t.Errorf("CloseWatches closed %d", n)
		}
		if _, closed := drain(w); !closed {
			t.Errorf("CloseWatches did not close")
		}
	})
}

func TestSlowClientIsClosedNotBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := seeded(t, Options{WatchBufferSize: 2})
		w := openWatch(t, lw, metav1.ListOptions{ResourceVersion: "5"})
		for i := range 10 { // never blocks although nobody reads
			mustCreate(t, srv, newPod("ns", "p"+string(rune('a'+i)), nil))
		}
		got, closed := drain(w)
		if !closed || len(got) > 3 {
			t.Errorf("got %q closed=%v; want a closed watch with at most 3 events", got, closed)
		}
		if n := srv.Stats().SlowWatchesClosed; n != 1 {
			t.Errorf("SlowWatchesClosed = %d; want 1", n)
		}
	})
}
