package shard

// MemberMetrics receives a Member's figures. Every method must be cheap
// and must not block; they are called from the Member's goroutine.
type MemberMetrics interface {
	// Assignment reports each new assignment: the number of live members
	// and of slices this member owns.
	Assignment(members, owned int)
	// Withheld reports, after each change, how many owned slices the
	// member withholds: the handovers in progress with fencing (always 0
	// without).
	Withheld(slices int)
	// Reassigned counts the slices this member gained and lost in one
	// change (either may be 0).
	Reassigned(gained, lost int)
	// Renewal counts one write of the member's Lease; ok is false when it
	// failed.
	Renewal(ok bool)
	// Collected counts one stale Lease deleted.
	Collected()
}

// NoopMemberMetrics discards everything; it is the default.
type NoopMemberMetrics struct{}

func (NoopMemberMetrics) Assignment(int, int) {}
func (NoopMemberMetrics) Withheld(int)        {}
func (NoopMemberMetrics) Reassigned(int, int) {}
func (NoopMemberMetrics) Renewal(bool)        {}
func (NoopMemberMetrics) Collected()          {}
