// Package apifailure is the one decision table of API failures that the
// reflector's and the RetryWatcher's tests read: each failure a server or
// transport can answer, by the name the scenarios use (testdata's
// "watch-failed 403", "err=403"), the error it arrives as, the Reason the
// shared vocabulary gives it (reflector.Classify) and what each machine
// does about it. The reflector's tests check its column against
// Classify and the machine, the RetryWatcher's against its classes, and
// both scenario harnesses build their errors from it, so the two machines
// cannot drift apart on what a failure means; where their policies differ
// (the RetryWatcher ends on 401/403, the reflector retries them slowly),
// the table says so row by row.
//
// It is test support: no library package imports it.
package apifailure

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reflector actions: what a reflector does after a watch fails with the
// failure (then a backoff, slow when the action says so, and at least the
// server's requested delay).
const (
	Rewatch       = "rewatch"        // back off, re-watch from the last RV
	Relist        = "relist"         // back off, then list again
	RewatchSlowly = "rewatch slowly" // back off at least Backoff.Slow, re-watch
	RelistSlowly  = "relist slowly"  // back off at least Backoff.Slow, list again
)

// Failure is one row of the table.
type Failure struct {
	// Name is the scenarios' name for the failure.
	Name string
	// Reason is the reflector.Reason that reflector.Classify gives the
	// error, by its String.
	Reason string
	// Reflector is what a reflector does when its watch fails with it
	// (Rewatch, Relist, RewatchSlowly, RelistSlowly).
	Reflector string
	// RetryWatcher is the RetryWatcher's retrywatcher.ErrorClass for it
	// when the server asks for no delay (a requested delay makes a
	// retried class "throttled"): "gone" and "unauthorized" end the watch
	// (gone relists in relist mode), the others retry with backoff.
	RetryWatcher string
	// Status reports whether the error is an API status, which can also
	// arrive as a watch ERROR event.
	Status bool

	err func(retryAfter int) error
}

// Err returns the error as a server or transport returns it; retryAfter
// (seconds) is the delay the server asks for, where the failure carries
// one (429, timeouts), and ignored elsewhere.
func (f Failure) Err(retryAfter int) error { return f.err(retryAfter) }

var pods = schema.GroupResource{Resource: "pods"}

var table = []Failure{
	{Name: "410", Reason: "Expired", Reflector: Relist, RetryWatcher: "gone", Status: true,
		err: func(int) error { return apierrors.NewResourceExpired("too old resource version") }},
	{Name: "gone", Reason: "Expired", Reflector: Relist, RetryWatcher: "gone", Status: true,
		err: func(int) error {
			//lint:ignore SA1019 servers before 1.16 still answer with a bare 410 Gone
			return apierrors.NewGone("gone")
		}},
	{Name: "too-large", Reason: "Expired", Reflector: Relist, RetryWatcher: "gone", Status: true,
		err: func(int) error {
			return &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: 504, Reason: metav1.StatusReasonTimeout,
				Message: "Too large resource version",
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}},
			}}
		}},
	{Name: "429", Reason: "TooManyRequests", Reflector: Rewatch, RetryWatcher: "throttled", Status: true,
		err: func(ra int) error { return apierrors.NewTooManyRequests("slow down", ra) }},
	{Name: "500", Reason: "ServerError", Reflector: Rewatch, RetryWatcher: "server", Status: true,
		err: func(int) error { return apierrors.NewInternalError(errors.New("boom")) }},
	{Name: "503", Reason: "ServerError", Reflector: Rewatch, RetryWatcher: "server", Status: true,
		err: func(int) error { return apierrors.NewServiceUnavailable("unavailable") }},
	{Name: "504", Reason: "ServerError", Reflector: Rewatch, RetryWatcher: "server", Status: true,
		err: func(ra int) error { return apierrors.NewTimeoutError("timeout", ra) }},
	{Name: "server-timeout", Reason: "ServerError", Reflector: Rewatch, RetryWatcher: "server", Status: true,
		err: func(ra int) error { return apierrors.NewServerTimeout(pods, "list", ra) }},
	{Name: "400", Reason: "Other", Reflector: Rewatch, RetryWatcher: "other", Status: true,
		err: func(int) error { return apierrors.NewBadRequest("sendInitialEvents is not supported") }},
	{Name: "401", Reason: "Unauthorized", Reflector: RewatchSlowly, RetryWatcher: "unauthorized", Status: true,
		err: func(int) error { return apierrors.NewUnauthorized("who are you") }},
	{Name: "403", Reason: "Forbidden", Reflector: RewatchSlowly, RetryWatcher: "unauthorized", Status: true,
		err: func(int) error { return apierrors.NewForbidden(pods, "", errors.New("RBAC says no")) }},
	{Name: "404", Reason: "NotFound", Reflector: RelistSlowly, RetryWatcher: "other", Status: true,
		err: func(int) error { return apierrors.NewNotFound(pods, "") }},
	{Name: "refused", Reason: "Connection", Reflector: Rewatch, RetryWatcher: "network",
		err: func(int) error { return fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED) }},
	{Name: "reset", Reason: "Connection", Reflector: Rewatch, RetryWatcher: "network",
		err: func(int) error { return fmt.Errorf("read tcp: %w", syscall.ECONNRESET) }},
	{Name: "eof", Reason: "Connection", Reflector: Rewatch, RetryWatcher: "network",
		err: func(int) error { return io.EOF }},
	{Name: "bogus", Reason: "Other", Reflector: Rewatch, RetryWatcher: "other",
		err: func(int) error { return errors.New("something odd") }},
}

// All returns every row, in the table's order.
func All() []Failure { return append([]Failure(nil), table...) }

// Lookup returns the row named name.
func Lookup(name string) (Failure, bool) {
	for _, f := range table {
		if f.Name == name {
			return f, true
		}
	}
	return Failure{}, false
}
