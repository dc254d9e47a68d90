package reflector

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
	// event or bookmark applied; "" before the first list completes.
	LastSyncResourceVersion string
	// StreamFallback is ReasonNone while streaming lists are in use (or
	// were never asked for); otherwise why the reflector gave them up for
	// this source and lists with pagination instead (today only
	// ReasonStreamIncomplete: see Config.StreamDeadline).
	StreamFallback Reason
}
