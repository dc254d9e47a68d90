package reflector

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Reason classifies an error the reflector met. Every error is counted under
// exactly one Reason (Metrics.Error) and the last one is shown in Status.
type Reason int

const (
	// ReasonNone: no error. As a relist cause it means "the first list".
	ReasonNone Reason = iota
	// ReasonExpired: 410 Gone/Expired, or a resource version too large for
	// the server to serve yet. The remedy is a relist.
	ReasonExpired
	// ReasonTooManyRequests: 429; the Retry-After hint is honoured.
	ReasonTooManyRequests
	// ReasonServerError: a 5xx status, including server timeouts.
	ReasonServerError
	// ReasonConnection: connection refused or reset, EOF, network timeout.
	ReasonConnection
	// ReasonUnauthorized: 401; the client's credentials are refused.
	ReasonUnauthorized
	// ReasonForbidden: 403; RBAC does not allow list or watch.
	ReasonForbidden
	// ReasonNotFound: 404; the resource does not exist (e.g. a CRD that is
	// not installed).
	ReasonNotFound
	// ReasonDecode: a response the reflector cannot understand, e.g. a list
	// without list metadata or an ERROR event that carries no Status.
	ReasonDecode
	// ReasonUnexpectedType: an object that is not of the reflector's type;
	// it is dropped.
	ReasonUnexpectedType
	// ReasonWatchIdle: the watchdog closed a watch that carried neither an
	// event nor a bookmark for the idle window.
	ReasonWatchIdle
	// ReasonShortWatch: the server closed a watch within seconds of
	// opening it, well before the timeout it asked for, which suggests an
	// unhealthy server or proxy. The first such close in a while is
	// resumed at once (counted, and logged at V(4)), and so are closes
	// after many events (kube-apiserver sheds a watcher that reads more
	// slowly than its events come), up to 22 a minute; a run of them is
	// resumed after a backoff, keeping what each watch delivered.
	ReasonShortWatch
	// ReasonNoResume: a relist cause only: a watch from "" or "0" ended
	// before any resource version was known, so it cannot be resumed.
	ReasonNoResume
	// ReasonStore: the store refused a Replace.
	ReasonStore
	// ReasonStreamIncomplete: a streaming list ended before its
	// k8s.io/initial-events-end bookmark: the server closed or cut it, or
	// the bookmark did not come within Config.StreamDeadline. The cycle
	// falls back to a paginated list.
	ReasonStreamIncomplete
	// ReasonInvalidResourceVersion: a list, event or bookmark carried an
	// empty or non-numeric resource version. It is never used to resume.
	ReasonInvalidResourceVersion
	// ReasonRequested: a relist cause only: the owner asked for a new list
	// (Relist), e.g. because a sharded source's assignment changed.
	ReasonRequested
	// ReasonOther: any other error, e.g. 400 Bad Request.
	ReasonOther
)

var reasonNames = [...]string{
	"None", "Expired", "TooManyRequests", "ServerError", "Connection", "Unauthorized", "Forbidden",
	"NotFound", "Decode", "UnexpectedType", "WatchIdle", "ShortWatch", "NoResume", "Store",
	"StreamIncomplete", "InvalidResourceVersion", "Requested", "Other",
}

func (r Reason) String() string {
	if r < 0 || int(r) >= len(reasonNames) {
		return "Unknown"
	}
	return reasonNames[r]
}

// reasonNamed returns the Reason called name, ReasonNone for "" and
// ReasonOther for a name it does not know.
func reasonNamed(name string) Reason {
	if name == "" {
		return ReasonNone
	}
	for i, n := range reasonNames {
		if n == name {
			return Reason(i)
		}
	}
	return ReasonOther
}

// Lasting reports whether errors of this class are unlikely to clear by
// themselves soon (401, 403, 404: credentials, RBAC or a resource that is
// not installed), so the reflector retries them on the slow backoff floor
// and code waiting for a sync can give up at once with the error.
func (r Reason) Lasting() bool {
	return r == ReasonUnauthorized || r == ReasonForbidden || r == ReasonNotFound
}

// decodeError marks an error as a ReasonDecode error.
type decodeError struct{ err error }

func (e decodeError) Error() string { return "decode: " + e.err.Error() }
func (e decodeError) Unwrap() error { return e.err }

// Classify returns the Reason for err; nil yields ReasonNone.
func Classify(err error) Reason {
	switch {
	case err == nil:
		return ReasonNone
	case errors.As(err, new(decodeError)), apierrors.IsUnexpectedObjectError(err):
		return ReasonDecode
	case isExpired(err):
		return ReasonExpired
	}
	if r, ok := classifyStatus(err); ok {
		return r
	}
	if isConnectionError(err) {
		return ReasonConnection
	}
	return ReasonOther
}

// classifyStatus maps an API status error to its Reason.
func classifyStatus(err error) (Reason, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return ReasonNone, false
	}
	code := status.Status().Code
	switch {
	case apierrors.IsTooManyRequests(err):
		return ReasonTooManyRequests, true
	case apierrors.IsUnauthorized(err):
		return ReasonUnauthorized, true
	case apierrors.IsForbidden(err):
		return ReasonForbidden, true
	case apierrors.IsNotFound(err):
		return ReasonNotFound, true
	case code >= http.StatusInternalServerError, apierrors.IsInternalError(err),
		apierrors.IsServerTimeout(err), apierrors.IsServiceUnavailable(err), apierrors.IsTimeout(err):
		return ReasonServerError, true
	}
	return ReasonOther, true
}

// isExpired reports a 410 (Expired or Gone) or a "too large resource
// version" error: in both cases the requested resource version cannot be
// served and only a relist helps.
func isExpired(err error) bool {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return true
	}
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	// Servers before 1.18.6 said so only in a timeout's message.
	var status apierrors.APIStatus
	if !apierrors.IsTimeout(err) || !errors.As(err, &status) {
		return false
	}
	const tooLarge = "Too large resource version"
	if strings.Contains(status.Status().Message, tooLarge) {
		return true
	}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			if c.Message == tooLarge {
				return true
			}
		}
	}
	return false
}

func isConnectionError(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}
