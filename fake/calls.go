package fake

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/klog/v2"
)

// maxCalls bounds the call log; older calls are dropped first.
const maxCalls = 10000

// Call is one List or Watch request as the server received it.
type Call struct {
	// Verb is VerbList or VerbWatch.
	Verb      Verb
	Resource  schema.GroupVersionResource
	Namespace string
	// Options are the request's options (selectors of the ListerWatcher's
	// LWOptions included).
	Options metav1.ListOptions
	// Err is the error returned, or delivered in-stream when InStream.
	Err      error
	InStream bool
	// ListResourceVersion is a successful list's metadata.resourceVersion.
	ListResourceVersion string
}

// String renders the call compactly, e.g.
// "watch pods rv=5 match=NotOlderThan initial bookmarks -> 410 Expired".
func (c Call) String() string {
	var b strings.Builder
	b.WriteString(map[Verb]string{VerbList: "list", VerbWatch: "watch"}[c.Verb])
	b.WriteString(" " + c.Resource.Resource)
	o := c.Options
	for _, kv := range [][2]string{
		{"ns", c.Namespace}, {"rv", o.ResourceVersion}, {"match", string(o.ResourceVersionMatch)},
		{"labels", o.LabelSelector}, {"fields", o.FieldSelector}, {"shards", o.ShardSelector},
	} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	if o.Limit > 0 {
		fmt.Fprintf(&b, " limit=%d", o.Limit)
	}
	if o.Continue != "" {
		b.WriteString(" continue")
	}
	if o.SendInitialEvents != nil {
		fmt.Fprintf(&b, " sendInitialEvents=%t", *o.SendInitialEvents)
	}
	if o.AllowWatchBookmarks {
		b.WriteString(" bookmarks")
	}
	b.WriteString(" -> ")
	switch {
	case c.Err != nil && c.InStream:
		b.WriteString("in-stream " + errorSummary(c.Err))
	case c.Err != nil:
		b.WriteString(errorSummary(c.Err))
	case c.Verb == VerbList:
		b.WriteString("ok rv=" + c.ListResourceVersion)
	default:
		b.WriteString("ok")
	}
	return b.String()
}

// errorSummary is "<code> <reason>" for a status error, "connection
// refused", or the error text.
func errorSummary(err error) string {
	if st, ok := err.(apierrors.APIStatus); ok {
		return fmt.Sprintf("%d %s", st.Status().Code, st.Status().Reason)
	}
	if utilnet.IsConnectionRefused(err) {
		return "connection refused"
	}
	return err.Error()
}

// Calls returns the List and Watch requests received so far (at most the
// last 10000), oldest first: tests can assert the exact sequence a client
// issued, e.g. that it relisted with resourceVersion "" after a 410.
func (s *Server) Calls() []Call {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ResetCalls empties the call log.
func (s *Server) ResetCalls() {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	s.calls = nil
}

func (s *Server) record(ctx context.Context, c Call) {
	klog.FromContext(ctx).V(5).Info("fake: request", "call", c.String())
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	if len(s.calls) >= maxCalls {
		s.calls = append(s.calls[:0], s.calls[len(s.calls)-maxCalls+1:]...)
	}
	s.calls = append(s.calls, c)
}
