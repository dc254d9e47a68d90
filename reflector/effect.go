package reflector

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/objname"
	"github.com/listwatch/listwatch/store"
)

// Effect is an action the machine asks its shell to perform, in order. The
// set is closed. Store effects (Replace, Apply, Progress) are executed
// synchronously; List and Watch start requests whose results come back as
// inputs.
type Effect interface {
	fmt.Stringer
	isEffect()
}

// List asks for one list request (one page) with these options. Its result
// is a ListPage or ListFailed input.
type List struct{ Options metav1.ListOptions }

// Watch asks to open a watch with these options (a streaming list when
// SendInitialEvents is set). At most one watch is open at a time: the shell
// must already have closed the previous one. Its results are WatchOpened or
// WatchFailed, then WatchEvent inputs, then WatchClosed.
type Watch struct{ Options metav1.ListOptions }

// StopWatch asks to close the open watch (or abandon the one being opened);
// no input from it may be delivered afterwards.
type StopWatch struct{}

// Sleep says the machine waits D before its next action. The shell's timer
// is driven by Machine.Deadline; Sleep makes the delay visible.
type Sleep struct{ D time.Duration }

// Replace asks the store to replace its content with a complete list.
// Copy (ListPage.Shared): the items point into the list response's array,
// and the store is handed a shallow copy of each, an object of its own.
type Replace[T store.Object] struct {
	Items           []T
	ResourceVersion string
	Copy            bool
}

// ReplacePage asks a PagedStore to take one page of a paginated list in
// progress; First marks the first page of a new list. The machine emits it
// instead of Replace (for lists of more than one page) when
// [Config.PagedReplace] is set, as the reflector sets it when its store is
// a [PagedStore].
//
// A list of more than PageSize items in one response (a server or a
// ListerWatcher that does not paginate) is handed over the same way, in
// pages of PageSize: with Copy (as Replace's), each page's items are
// copied only as it is handed over, so the copies of the whole list never
// sit beside the cache at once.
type ReplacePage[T store.Object] struct {
	Items []T
	First bool
	Copy  bool
}

// ReplaceEnd asks a PagedStore to complete the list of the ReplacePage
// effects before it: what the list did not contain is deleted.
type ReplaceEnd struct{ ResourceVersion string }

// Apply asks the store to apply one watch event: Add for watch.Added,
// Update for watch.Modified, Delete for watch.Deleted. The machine emits it
// as *Apply[T], pointing into a buffer that the next Step reuses.
type Apply[T store.Object] struct {
	Type   watch.EventType
	Object T
}

// Progress reports a resource version reached without an object change
// (a bookmark); it goes to the store's optional ResourceVersionUpdater.
type Progress struct{ ResourceVersion string }

// ReportError reports an error: the shell logs it and hands it to the
// error hook. It has already been counted. Quiet marks a problem the
// machine works around in the same cycle — a streaming list that fails and
// is answered with a paginated list, as in client-go; a list without a
// resource version — which the shell logs at V(4) only and does not hand
// to the hook: the hook sees the failures that leave a cycle without data.
type ReportError struct {
	Reason Reason
	Err    error
	Quiet  bool
}

func (List) isEffect()           {}
func (Watch) isEffect()          {}
func (StopWatch) isEffect()      {}
func (Sleep) isEffect()          {}
func (Replace[T]) isEffect()     {}
func (Apply[T]) isEffect()       {}
func (ReplacePage[T]) isEffect() {}
func (ReplaceEnd) isEffect()     {}
func (Progress) isEffect()       {}
func (ReportError) isEffect()    {}

func (e List) String() string {
	o := e.Options
	var b strings.Builder
	if o.Continue != "" {
		fmt.Fprintf(&b, "list continue=%s", o.Continue)
	} else {
		fmt.Fprintf(&b, "list rv=%q", o.ResourceVersion)
	}
	if o.Limit > 0 {
		fmt.Fprintf(&b, " limit=%d", o.Limit)
	}
	return b.String()
}

func (e Watch) String() string {
	o := e.Options
	var b strings.Builder
	fmt.Fprintf(&b, "watch rv=%q", o.ResourceVersion)
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		fmt.Fprintf(&b, " send-initial-events match=%s", o.ResourceVersionMatch)
	}
	if o.AllowWatchBookmarks {
		b.WriteString(" bookmarks")
	}
	if o.TimeoutSeconds != nil {
		fmt.Fprintf(&b, " timeout=%ds", *o.TimeoutSeconds)
	}
	return b.String()
}

func (StopWatch) String() string  { return "stop-watch" }
func (e Sleep) String() string    { return "sleep " + e.D.Round(time.Millisecond).String() }
func (e Progress) String() string { return "progress rv=" + e.ResourceVersion }

func (e Replace[T]) String() string {
	names := make([]string, len(e.Items))
	for i, it := range e.Items {
		names[i] = objname.Of(it)
	}
	cp := ""
	if e.Copy {
		cp = " copy"
	}
	return fmt.Sprintf("replace rv=%s%s items=(%s)", e.ResourceVersion, cp, strings.Join(names, ","))
}

func (e ReplacePage[T]) String() string {
	names := make([]string, len(e.Items))
	for i, it := range e.Items {
		names[i] = objname.Of(it)
	}
	first := ""
	if e.First {
		first = " first"
	}
	if e.Copy {
		first += " copy"
	}
	return fmt.Sprintf("replace-page%s items=(%s)", first, strings.Join(names, ","))
}

func (e ReplaceEnd) String() string { return "replace-end rv=" + e.ResourceVersion }

func (e Apply[T]) String() string {
	return fmt.Sprintf("%s %s rv=%s", strings.ToLower(string(e.Type)), objname.Of(e.Object), e.Object.GetResourceVersion())
}

func (e ReportError) String() string {
	if e.Quiet {
		return fmt.Sprintf("notice %s: %v", e.Reason, e.Err)
	}
	return fmt.Sprintf("error %s: %v", e.Reason, e.Err)
}
