package retrywatcher

import (
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// ErrorClass is the machine's verdict on a failure: what it means for the
// watch and therefore what happens next.
type ErrorClass string

const (
	// ClassGone: the resource version is too old (410 Gone / Expired). The
	// events in between are lost to the server's history, so the watch cannot
	// resume: stop with an ERROR event, or relist in relist mode.
	ClassGone ErrorClass = "gone"
	// ClassUnauthorized: 401 or 403. Retrying will not help until someone
	// changes credentials or RBAC: stop with an ERROR event.
	ClassUnauthorized ErrorClass = "unauthorized"
	// ClassThrottled: 429 or any status asking the client to come back later.
	// Retry after max(backoff, Retry-After).
	ClassThrottled ErrorClass = "throttled"
	// ClassServer: 5xx. Retry with backoff.
	ClassServer ErrorClass = "server"
	// ClassNetwork: connection refused or reset, EOF, timeouts. Retry with backoff.
	ClassNetwork ErrorClass = "network"
	// ClassOther: anything else. Retried with backoff: a RetryWatcher gives up
	// only when it is certain it cannot go on.
	ClassOther ErrorClass = "other"
)

// classify sorts err into an ErrorClass and extracts the delay the server
// asked for, if any.
func classify(err error) (ErrorClass, time.Duration) {
	var retryAfter time.Duration
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && secs > 0 {
		retryAfter = time.Duration(secs) * time.Second
	}
	switch {
	case apierrors.IsGone(err) || apierrors.IsResourceExpired(err):
		return ClassGone, 0
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		return ClassUnauthorized, 0
	case apierrors.IsTooManyRequests(err) || retryAfter > 0:
		return ClassThrottled, retryAfter
	}
	if code := statusCode(err); code >= 500 {
		return ClassServer, 0
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
		return ClassNetwork, 0
	}
	return ClassOther, 0
}

func statusCode(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}

// statusFromEvent decodes the object of an ERROR event into an error. A
// *metav1.Status (typed or unstructured) becomes an *apierrors.StatusError;
// anything else becomes a plain error that says what arrived.
func statusFromEvent(ev watch.Event) error {
	if ev.Object == nil {
		return errors.New("watch ERROR event without an object")
	}
	err := apierrors.FromObject(ev.Object)
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	return fmt.Errorf("watch ERROR event with a %T instead of a Status", ev.Object)
}

// errorEvent wraps err as an ERROR event carrying a *metav1.Status, the form
// watch consumers expect.
func errorEvent(err error) watch.Event {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		return watch.Event{Type: watch.Error, Object: &st}
	}
	st := apierrors.NewInternalError(err).ErrStatus
	return watch.Event{Type: watch.Error, Object: &st}
}

// describeEvent renders an event in one short line for logs and scenarios.
func describeEvent(ev watch.Event) string {
	if ev.Type == watch.Error {
		if st, ok := ev.Object.(*metav1.Status); ok {
			return fmt.Sprintf("ERROR code=%d reason=%s", st.Code, st.Reason)
		}
		return fmt.Sprintf("ERROR object=%T", ev.Object)
	}
	if isNil(ev.Object) {
		return fmt.Sprintf("%s object=%T(nil)", ev.Type, ev.Object)
	}
	if acc, err := meta.Accessor(ev.Object); err == nil {
		return fmt.Sprintf("%s %s rv=%s", ev.Type, objectKey(acc), acc.GetResourceVersion())
	}
	if rv, ok := resourceVersionOf(ev.Object); ok {
		return fmt.Sprintf("%s object=%T rv=%s", ev.Type, ev.Object, rv)
	}
	return fmt.Sprintf("%s object=%T", ev.Type, ev.Object)
}

func objectKey(o metav1.Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}
