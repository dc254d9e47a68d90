package reflector

import (
	"encoding/json"
	"errors"
)

// Status is a snapshot of the reflector's health, safe to copy.
type Status struct {
	// Phase is the machine's current phase.
	Phase Phase
	// Synced is true once a complete list has been handed to the store with
	// Replace; it stays true afterwards, even across relists.
	Synced bool
	// Reason classifies LastError; ReasonNone when LastError is nil.
	Reason Reason
	// LastError is the most recent error; it is cleared when a later list
	// completes or a later watch opens.
	LastError error
	// Failures counts consecutive failed attempts since the last success.
	Failures int
	// LastSyncResourceVersion is the resource version of the last list,
	// event or bookmark applied; "" before the first list completes
	// (Config.ResumeResourceVersion, if set).
	LastSyncResourceVersion string
	// ResourceVersionUnavailable is set while LastSyncResourceVersion is
	// known to be expired or too large for the server, so that the next
	// list is a quorum read; a completed list clears it. A machine that
	// takes up from this one is given it as Config.ResumeUnavailable.
	ResourceVersionUnavailable bool
	// StreamFallback is ReasonNone while streaming lists are in use (or
	// were never asked for); otherwise why the reflector gave them up for
	// this source and lists with pagination instead (today only
	// ReasonStreamIncomplete: see Config.StreamDeadline).
	StreamFallback Reason
}

// statusJSON is Status as status pages serve it: the phase and reasons by
// name ("" for none), the last error's text.
type statusJSON struct {
	Phase                      Phase  `json:"phase"`
	Synced                     bool   `json:"synced"`
	Reason                     string `json:"reason,omitempty"`
	LastError                  string `json:"lastError,omitempty"`
	Failures                   int    `json:"failures"`
	LastSyncResourceVersion    string `json:"resourceVersion,omitempty"`
	ResourceVersionUnavailable bool   `json:"resourceVersionUnavailable,omitempty"`
	StreamFallback             string `json:"streamFallback,omitempty"`
}

// MarshalJSON writes the status as status pages serve it.
func (s Status) MarshalJSON() ([]byte, error) {
	out := statusJSON{Phase: s.Phase, Synced: s.Synced, Failures: s.Failures, LastSyncResourceVersion: s.LastSyncResourceVersion,
		ResourceVersionUnavailable: s.ResourceVersionUnavailable}
	if s.LastError != nil {
		out.Reason, out.LastError = s.Reason.String(), s.LastError.Error()
	}
	if s.StreamFallback != ReasonNone {
		out.StreamFallback = s.StreamFallback.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes; the last error comes back
// as its text only.
func (s *Status) UnmarshalJSON(b []byte) error {
	var in statusJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = Status{Phase: in.Phase, Synced: in.Synced, Failures: in.Failures, LastSyncResourceVersion: in.LastSyncResourceVersion,
		ResourceVersionUnavailable: in.ResourceVersionUnavailable, Reason: reasonNamed(in.Reason), StreamFallback: reasonNamed(in.StreamFallback)}
	if in.LastError != "" {
		s.LastError = errors.New(in.LastError)
	}
	return nil
}
