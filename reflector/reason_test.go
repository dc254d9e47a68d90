package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

func TestClassify(t *testing.T) {
	tooLargeOld := apierrors.NewTimeoutError("Too large resource version: 20, current: 10", 1)
	cases := []struct {
		err  error
		want Reason
	}{
		{nil, ReasonNone},
		{errorFor("410", 0), ReasonExpired},
		{errorFor("gone", 0), ReasonExpired},
		{errorFor("too-large", 0), ReasonExpired},
		{tooLargeOld, ReasonExpired},
		{apierrors.NewTimeoutError("slow", 1), ReasonServerError},
		{errorFor("429", 3), ReasonTooManyRequests},
		{errorFor("500", 0), ReasonServerError},
		{errorFor("503", 0), ReasonServerError},
		{&apierrors.StatusError{ErrStatus: metav1.Status{Code: 502}}, ReasonServerError},
		{errorFor("401", 0), ReasonUnauthorized},
		{errorFor("403", 0), ReasonForbidden},
		{errorFor("404", 0), ReasonNotFound},
		{errorFor("400", 0), ReasonOther},
		{errorFor("refused", 0), ReasonConnection},
		{errorFor("reset", 0), ReasonConnection},
		{io.ErrUnexpectedEOF, ReasonConnection},
		{context.DeadlineExceeded, ReasonConnection},
		{errorFor("decode", 0), ReasonDecode},
		{apierrors.FromObject(objects.Pod("ns", "a", objects.RV("1"))), ReasonDecode},
		{fmt.Errorf("wrapped: %w", errorFor("403", 0)), ReasonForbidden},
		{errors.New("mystery"), ReasonOther},
	}
	for _, c := range cases {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestEnumStrings(t *testing.T) {
	for r := ReasonNone; r <= ReasonOther; r++ {
		if s := r.String(); s == "" || s == "Unknown" {
			t.Errorf("Reason(%d) has no name", r)
		}
	}
	if Reason(-1).String() != "Unknown" || Phase(42).String() != "unknown" {
		t.Error("out-of-range values must not panic and must say unknown")
	}
	for p := PhaseListing; p <= PhaseStopped; p++ {
		if p.String() == "unknown" {
			t.Errorf("Phase(%d) has no name", p)
		}
	}
}
