package reflector

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// The vocabulary for talking to the API server, shared by the reflector
// and the retrywatcher package: Classify names what went wrong (a
// Reason), RetryAfter says how long the server asked the client to wait,
// and ErrorFromEvent turns a watch ERROR event into an error. Each machine
// derives its own policy from these (the reflector's in docs/reflector.md,
// the RetryWatcher's in retrywatcher/classify.go), so that the same
// failure is never understood two ways.

// RetryAfter returns the delay the server asked for with err (a
// Retry-After on a 429, or a server timeout's retryAfterSeconds), or 0.
func RetryAfter(err error) time.Duration {
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	return 0
}

// ErrorFromEvent decodes the object of a watch ERROR event: a
// *metav1.Status (typed or unstructured) becomes an *apierrors.StatusError,
// so that Classify sees its code and reason; anything else becomes an
// error that Classify reports as ReasonDecode.
func ErrorFromEvent(ev watch.Event) error {
	if ev.Object == nil {
		return decodeError{errors.New("ERROR event without an object")}
	}
	err := apierrors.FromObject(ev.Object)
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		return decodeError{fmt.Errorf("ERROR event carries a %T, not a Status", ev.Object)}
	}
	return se
}
