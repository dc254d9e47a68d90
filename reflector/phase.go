package reflector

import "fmt"

// Phase is the state of the List-then-Watch machine. The set is closed: the
// machine is always in exactly one of these phases. docs/reflector.md draws
// the transitions.
type Phase int

const (
	// PhaseListing: a paginated list is in flight. A complete list moves to
	// PhaseWatching; an expired resource version retries at once with a
	// quorum read (RV=""); other errors move to PhaseBackoff.
	PhaseListing Phase = iota
	// PhaseStreaming: a streaming list (watch with sendInitialEvents) is
	// collecting the initial objects. The bookmark annotated
	// k8s.io/initial-events-end moves to PhaseWatching on the same stream;
	// an unsupported-feature error falls back to PhaseListing (auto mode).
	PhaseStreaming
	// PhaseWatching: a watch from the last synced resource version is being
	// opened or is open. A clean close or the idle watchdog re-watches at
	// once; 410 Gone relists after a backoff; other errors back off and
	// re-watch.
	PhaseWatching
	// PhaseBackoff: waiting for a delay to pass before retrying; the Status
	// reason tells why (e.g. Forbidden, NotFound, TooManyRequests).
	PhaseBackoff
	// PhaseStopped: terminal; the machine ignores every further input.
	PhaseStopped
)

var phaseNames = [...]string{"listing", "streaming", "watching", "backoff", "stopped"}

func (p Phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return "unknown"
	}
	return phaseNames[p]
}

// MarshalText writes the phase's name.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a phase's name.
func (p *Phase) UnmarshalText(b []byte) error {
	for i, n := range phaseNames {
		if n == string(b) {
			*p = Phase(i)
			return nil
		}
	}
	return fmt.Errorf("reflector: unknown phase %q", b)
}
