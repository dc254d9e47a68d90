package fake

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Verb selects the calls a Failure applies to.
type Verb uint8

const (
	// VerbList is List calls.
	VerbList Verb = 1 << iota
	// VerbWatch is Watch calls.
	VerbWatch
	// VerbGet, VerbCreate, VerbUpdate, VerbPatch and VerbDelete are the
	// requests of those verbs a front end serving the Server to clients
	// (fake/fakeapi) checks with Server.Fault. The Server's own Get,
	// Create, Update and Delete methods are the test's hand and are never
	// faulted.
	VerbGet
	VerbCreate
	VerbUpdate
	VerbPatch
	VerbDelete
	// VerbDeleteCollection is a deletecollection request (fake/fakeapi).
	VerbDeleteCollection
)

// verbNames are the verbs' names, as in RBAC and kube-apiserver's errors.
var verbNames = map[Verb]string{
	VerbList: "list", VerbWatch: "watch", VerbGet: "get", VerbCreate: "create",
	VerbUpdate: "update", VerbPatch: "patch", VerbDelete: "delete", VerbDeleteCollection: "deletecollection",
}

// FailureKind is the error an injected Failure produces, in the form
// client-go's REST client surfaces it.
type FailureKind int

const (
	// Forbidden is 403 (missing RBAC).
	Forbidden FailureKind = iota + 1
	// NotFound is 404 (the resource type is not served).
	NotFound
	// Expired is 410 with reason Expired.
	Expired
	// TooManyRequests is 429 with Retry-After (Failure.RetryAfterSeconds).
	TooManyRequests
	// InternalError is 500.
	InternalError
	// ConnectionRefused is a *url.Error wrapping a dial *net.OpError
	// wrapping syscall.ECONNREFUSED.
	ConnectionRefused
)

// Failure makes the next Times matching List/Watch calls fail.
type Failure struct {
	// Resource restricts the failure to one resource; zero means any.
	Resource schema.GroupVersionResource
	// Verbs restricts it to lists and/or watches, or names the REST verbs
	// it fails (see VerbGet); zero means lists and watches.
	Verbs Verb
	// Times is how many calls fail; must be at least 1.
	Times int
	// Kind is the error.
	Kind FailureKind
	// RetryAfterSeconds is the Retry-After of TooManyRequests (default 1).
	RetryAfterSeconds int
	// InStream makes a failing watch succeed and then deliver the error as
	// its only (ERROR) event, as kube-apiserver does for errors found after
	// it accepted a watch. ConnectionRefused cannot be in-stream.
	InStream bool
}

// WatchFault shapes the next Times watches opened on a resource.
type WatchFault struct {
	// Resource restricts the fault to one resource; zero means any.
	Resource schema.GroupVersionResource
	// Times is how many watches it applies to; zero means every watch until
	// ClearFaults.
	Times int
	// CloseAfterEvents closes the watch (cleanly) after that many
	// non-bookmark events were delivered; zero means never.
	CloseAfterEvents int
	// CloseAt closes the watch at that time of the server clock; zero means
	// never.
	CloseAt time.Time
	// Delay holds back each live event (and bookmark) until Delay after it
	// was committed. Opening events are not delayed.
	Delay time.Duration
	// Stall opens the watch stalled: nothing, not even bookmarks, is
	// delivered until Unstall. Events still queue, and overflow closes it.
	Stall bool
	// DropInitialEventsEnd leaves out the k8s.io/initial-events-end
	// bookmark of a streaming list (sendInitialEvents), as some proxies and
	// aggregated API servers do: the initial events and then the live
	// ones arrive, but nothing says where the first end.
	DropInitialEventsEnd bool
}

// faultState is the injected faults; guarded by Server.mu.
type faultState struct {
	// down makes every List/Watch fail with connection refused.
	down bool
	// failures are consumed first-match, in injection order; Times > 0.
	failures []Failure
	// watchFaults are applied first-match to new watches.
	watchFaults []WatchFault
	// stalled are resources whose watches are stalled; all if allStalled.
	stalled    map[schema.GroupVersionResource]bool
	allStalled bool
}

// FailNext injects f. Failures are matched in injection order.
func (s *Server) FailNext(f Failure) error {
	if f.Times < 1 || f.Kind < Forbidden || f.Kind > ConnectionRefused {
		return fmt.Errorf("fake: Failure needs Times >= 1 and a valid Kind, got %+v", f)
	}
	if f.InStream && f.Kind == ConnectionRefused {
		return errors.New("fake: a refused connection cannot be in-stream")
	}
	if f.Verbs == 0 {
		f.Verbs = VerbList | VerbWatch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failures = append(s.faults.failures, f)
	return nil
}

// InjectWatchFault shapes new watches; see WatchFault.
func (s *Server) InjectWatchFault(f WatchFault) error {
	if f.Times < 0 || f.CloseAfterEvents < 0 || f.Delay < 0 {
		return fmt.Errorf("fake: negative field in WatchFault %+v", f)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.watchFaults = append(s.faults.watchFaults, f)
	return nil
}

// ClearFaults removes every injected Failure and WatchFault and unstalls
// everything. It does not bring a down server up.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failures, s.faults.watchFaults = nil, nil
	s.faults.stalled, s.faults.allStalled = nil, false
	for w := range s.watchers {
		w.setStalled(false)
	}
}

// Stall pauses delivery on the open and future watches of gvr (zero: all
// resources): no events, no bookmarks. Events keep queueing; a watch whose
// queue overflows is closed.
func (s *Server) Stall(gvr schema.GroupVersionResource) { s.setStalled(gvr, true) }

// Unstall resumes delivery stopped by Stall or WatchFault.Stall.
func (s *Server) Unstall(gvr schema.GroupVersionResource) { s.setStalled(gvr, false) }

func (s *Server) setStalled(gvr schema.GroupVersionResource, stalled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gvr.Empty() {
		s.faults.allStalled, s.faults.stalled = stalled, nil
	} else {
		if s.faults.stalled == nil {
			s.faults.stalled = map[schema.GroupVersionResource]bool{}
		}
		s.faults.stalled[gvr] = stalled
	}
	for w := range s.watchers {
		if gvr.Empty() || w.pred.res.cfg.GVR == gvr {
			w.setStalled(stalled)
		}
	}
}

// CloseWatches closes the open watches of gvr (zero: all) cleanly, as a
// server-side timeout or a restarting apiserver would. It returns how many
// running watches it closed.
func (s *Server) CloseWatches(gvr schema.GroupVersionResource) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for w := range s.watchers {
		if (gvr.Empty() || w.pred.res.cfg.GVR == gvr) && w.end("closed by CloseWatches") {
			n++
		}
	}
	return n
}

// Down takes the server down: open watches are closed and every List and
// Watch fails with connection refused until Up. Writes still work.
func (s *Server) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.down = true
	for w := range s.watchers {
		w.end("server down")
	}
}

// Up brings the server back after Down.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.down = false
}

// Fault returns the error an injected Failure makes a request of verb (one
// Verb) on gvr in namespace fail with, consuming one use of it, or a
// refused connection while the server is Down, or nil. A front end that
// serves the Server to clients (fake/fakeapi) calls it before a get or a
// write, which then fails as a client would see it; lists and watches
// consult the faults themselves. An in-stream Failure fails such a request
// as an ordinary one.
func (s *Server) Fault(verb Verb, gvr GVR, namespace string) error {
	if verbNames[verb] == "" {
		return fmt.Errorf("fake: Fault needs one Verb, got %#x", uint8(verb))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err, _ := s.injectedLocked(verb, gvr, namespace)
	return err
}

// injectedLocked returns the error a call must fail with, if any, consuming
// one matching Failure; inStream reports that it belongs in the stream.
func (s *Server) injectedLocked(verb Verb, gvr schema.GroupVersionResource, namespace string) (err error, inStream bool) {
	name := verbNames[verb]
	if s.faults.down {
		s.stats.faults.Add(1)
		return errConnRefused(name, gvr, namespace), false
	}
	for i := range s.faults.failures {
		f := &s.faults.failures[i]
		if f.Verbs&verb == 0 || (!f.Resource.Empty() && f.Resource != gvr) {
			continue
		}
		f.Times--
		used := *f // removing f below shifts the next Failure into its place
		if f.Times == 0 {
			s.faults.failures = append(s.faults.failures[:i], s.faults.failures[i+1:]...)
		}
		s.stats.faults.Add(1)
		return failureError(used, name, gvr, namespace), used.InStream && verb == VerbWatch
	}
	return nil, false
}

// watchFaultLocked returns the fault for a new watch of gvr, consuming one
// use of it, and whether the watch starts stalled.
func (s *Server) watchFaultLocked(gvr schema.GroupVersionResource) (WatchFault, bool) {
	stalled := s.faults.allStalled || s.faults.stalled[gvr]
	for i := range s.faults.watchFaults {
		f := s.faults.watchFaults[i]
		if !f.Resource.Empty() && f.Resource != gvr {
			continue
		}
		if f.Times > 0 {
			s.faults.watchFaults[i].Times--
			if f.Times == 1 {
				s.faults.watchFaults = append(s.faults.watchFaults[:i], s.faults.watchFaults[i+1:]...)
			}
		}
		return f, stalled || f.Stall
	}
	return WatchFault{}, stalled
}

// failureError builds the error of f for a call.
func failureError(f Failure, verb string, gvr schema.GroupVersionResource, namespace string) error {
	gr := gvr.GroupResource()
	switch f.Kind {
	case Forbidden:
		scope := "at the cluster scope"
		if namespace != "" {
			scope = fmt.Sprintf("in the namespace %q", namespace)
		}
		//lint:ignore ST1005 the wording is kube-apiserver's, capital included
		return apierrors.NewForbidden(gr, "", fmt.Errorf(
			"User \"system:serviceaccount:default:fake\" cannot %s resource %q in API group %q %s",
			verb, gvr.Resource, gvr.Group, scope))
	case NotFound:
		return errNoResource(gvr)
	case Expired:
		if verb == "watch" {
			return apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old.")
		}
		return apierrors.NewResourceExpired(msgListExpired)
	case TooManyRequests:
		retry := f.RetryAfterSeconds
		if retry <= 0 {
			retry = 1
		}
		return apierrors.NewTooManyRequests("Too many requests, please try again later.", retry)
	case InternalError:
		return apierrors.NewInternalError(errors.New("injected by fake.Server"))
	}
	return errConnRefused(verb, gvr, namespace)
}

// statusOf returns the Status object an in-stream error event carries.
func statusOf(err error) *metav1.Status {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		return &st
	}
	return &metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError, Message: err.Error()}
}
