package reflector

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/store"
)

// report records and counts an error without changing phase.
func (m *Machine[T]) report(reason Reason, err error) {
	m.reason, m.lastErr = reason, err
	m.cfg.Metrics.Error(reason)
	m.emit(ReportError{Reason: reason, Err: err})
}

// notice records and counts a problem the machine works around in the
// same cycle: like report, but the shell logs it at V(4) and does not hand
// it to the error hook (ReportError.Quiet).
func (m *Machine[T]) notice(reason Reason, err error) {
	m.reason, m.lastErr = reason, err
	m.cfg.Metrics.Error(reason)
	m.emit(ReportError{Reason: reason, Err: err, Quiet: true})
}

// healthy clears the error state after a successful request.
func (m *Machine[T]) healthy() {
	m.reason, m.lastErr, m.failures = ReasonNone, nil, 0
}

// fail records a failed attempt and enters PhaseBackoff; after the delay the
// machine performs after.
func (m *Machine[T]) fail(reason Reason, err error, after resume) {
	m.report(reason, err)
	m.lastFail = reason
	m.failures++
	d := m.backoff.delay(m.now, m.cfg.Rand)
	if reason.Lasting() {
		d = max(d, m.cfg.Backoff.Slow)
	}
	// The server's own delay (a 429's Retry-After, a server timeout's
	// retryAfterSeconds) is a floor, whatever the reason.
	d = max(d, RetryAfter(err))
	m.phase = PhaseBackoff
	m.wakeAt = m.now.Add(d)
	m.after = after
	m.cause = reason
	m.emit(Sleep{D: d})
}

// typed converts an object from the server to T; anything else (nil, a
// typed nil, another type) is reported as ReasonUnexpectedType and dropped.
func (m *Machine[T]) typed(o runtime.Object) (T, bool) {
	var zero T
	if o == nil {
		m.report(ReasonUnexpectedType, fmt.Errorf("nil object, want %T", zero))
		return zero, false
	}
	if nilcheck.Is(o) {
		m.report(ReasonUnexpectedType, fmt.Errorf("nil %T, want %T", o, zero))
		return zero, false
	}
	t, ok := o.(T)
	if !ok {
		m.report(ReasonUnexpectedType, fmt.Errorf("object of type %T, want %T", o, zero))
		return zero, false
	}
	if want := m.cfg.ExpectedGVK; want != nil {
		if got := o.GetObjectKind().GroupVersionKind(); got != *want {
			m.report(ReasonUnexpectedType, fmt.Errorf("object of kind %v, want %v", got, *want))
			return zero, false
		}
	}
	return t, true
}

// typedAll converts a page of items, dropping (and reporting) those of the
// wrong type and those that cannot be keyed: one bad item must not keep
// the rest of the list out of the store.
func (m *Machine[T]) typedAll(objs []runtime.Object, into []T) []T {
	for _, o := range objs {
		if t, ok := m.typed(o); ok && m.keyable(t) {
			into = append(into, t)
		}
	}
	return into
}

// keyable reports whether obj can be keyed, reporting it when not. With
// the default KeyFunc that is having a name, checked without building the
// key.
func (m *Machine[T]) keyable(obj T) bool {
	var err error
	if m.cfg.nameKey {
		if obj.GetName() == "" && !m.cfg.NamelessKeys {
			err = store.ErrNoName
		}
	} else {
		_, err = m.cfg.KeyFunc(obj)
	}
	if err != nil {
		m.report(ReasonDecode, fmt.Errorf("list item dropped: it has no key: %w", err))
		return false
	}
	return true
}
