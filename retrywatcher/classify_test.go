package retrywatcher

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/internal/apifailure"
	"github.com/listwatch/listwatch/reflector"
)

// The RetryWatcher understands failures through the reflector's shared
// classification, so both read a failure the same way; its policy (the
// class) is a table over the reflector's reasons.
func TestClassifyUsesTheSharedVocabulary(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	tooLarge := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 504, Reason: metav1.StatusReasonTimeout,
		Message: "Too large resource version",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}},
	}}
	for _, tc := range []struct {
		name  string
		err   error
		class ErrorClass
		wait  time.Duration
	}{
		{"410", apierrors.NewResourceExpired("too old"), ClassGone, 0},
		// Only the reflector used to read this one as expired.
		{"too large resource version", tooLarge, ClassGone, 0},
		{"401", apierrors.NewUnauthorized("who"), ClassUnauthorized, 0},
		{"403", apierrors.NewForbidden(pods, "", errors.New("no")), ClassUnauthorized, 0},
		{"429", apierrors.NewTooManyRequests("slow", 7), ClassThrottled, 7 * time.Second},
		{"server timeout with a delay", apierrors.NewServerTimeout(pods, "watch", 3), ClassThrottled, 3 * time.Second},
		{"500", apierrors.NewInternalError(errors.New("boom")), ClassServer, 0},
		{"503", apierrors.NewServiceUnavailable("down"), ClassServer, 0},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), ClassNetwork, 0},
		{"deadline", context.DeadlineExceeded, ClassNetwork, 0},
		{"404", apierrors.NewNotFound(pods, "x"), ClassOther, 0},
		{"400", apierrors.NewBadRequest("bad"), ClassOther, 0},
	} {
		class, wait := classify(tc.err)
		if class != tc.class || wait != tc.wait {
			t.Errorf("%s: class %s wait %v, want %s %v", tc.name, class, wait, tc.class, tc.wait)
		}
	}
}

// The RetryWatcher's column of the shared decision table
// (internal/apifailure), which the reflector's tests read too: each
// failure gets the class the table gives it, and a delay the server asks
// for turns a retried class into "throttled" (an ended watch stays ended).
func TestDecisionTable(t *testing.T) {
	for _, f := range apifailure.All() {
		if class, wait := classify(f.Err(0)); string(class) != f.RetryWatcher || wait != 0 {
			t.Errorf("%s: class %s wait %v, table says %s", f.Name, class, wait, f.RetryWatcher)
		}
		err := f.Err(5)
		if reflector.RetryAfter(err) == 0 {
			continue
		}
		want := ClassThrottled
		if f.RetryWatcher == string(ClassGone) || f.RetryWatcher == string(ClassUnauthorized) {
			want = ErrorClass(f.RetryWatcher)
		}
		if class, wait := classify(err); class != want || wait != 5*time.Second {
			t.Errorf("%s with a 5s delay: class %s wait %v, want %s 5s", f.Name, class, wait, want)
		}
	}
}
