package retrywatcher

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"

	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/internal/objname"
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
// asked for, if any. The failure is understood by the reflector's shared
// vocabulary ([reflector.Classify], [reflector.RetryAfter]); the class is
// the RetryWatcher's policy for that Reason (classOf). A failure that
// carries a Retry-After is throttled unless its class ends the watch.
func classify(err error) (ErrorClass, time.Duration) {
	class := classOf(reflector.Classify(err))
	retryAfter := reflector.RetryAfter(err)
	if retryAfter > 0 && class != ClassGone && class != ClassUnauthorized {
		class = ClassThrottled
	}
	return class, retryAfter
}

// classOf is the RetryWatcher's decision table over the reflector's
// reasons: an expired resource version ends the watch (or relists), 401
// and 403 end it, everything else is retried with backoff. Where the
// reflector differs (it retries 401/403 slowly, relists on 404), it is
// because an informer must keep going while a RetryWatcher hands the
// decision to its consumer.
func classOf(r reflector.Reason) ErrorClass {
	switch r {
	case reflector.ReasonExpired:
		return ClassGone
	case reflector.ReasonUnauthorized, reflector.ReasonForbidden:
		return ClassUnauthorized
	case reflector.ReasonTooManyRequests:
		return ClassThrottled
	case reflector.ReasonServerError:
		return ClassServer
	case reflector.ReasonConnection:
		return ClassNetwork
	}
	return ClassOther
}

// statusFromEvent decodes the object of an ERROR event into an error
// ([reflector.ErrorFromEvent]).
func statusFromEvent(ev watch.Event) error { return reflector.ErrorFromEvent(ev) }

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
	if nilcheck.Is(ev.Object) {
		return fmt.Sprintf("%s object=%T(nil)", ev.Type, ev.Object)
	}
	if acc, err := meta.Accessor(ev.Object); err == nil {
		return fmt.Sprintf("%s %s rv=%s", ev.Type, objname.Of(acc), acc.GetResourceVersion())
	}
	if rv, ok := resourceVersionOf(ev.Object); ok {
		return fmt.Sprintf("%s object=%T rv=%s", ev.Type, ev.Object, rv)
	}
	return fmt.Sprintf("%s object=%T", ev.Type, ev.Object)
}
