package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/listwatch/listwatch/store"
)

// eventPrinter is the watch command's handler: one line per change, in the
// columns of 'kubectl get -w --output-watch-events'.
type eventPrinter[T store.Object] struct {
	w             io.Writer
	allNamespaces bool // print the NAMESPACE column
	watchOnly     bool // skip the initial list
	now           func() time.Time
}

func newEventPrinter[T store.Object](w io.Writer, allNamespaces, watchOnly bool) *eventPrinter[T] {
	p := &eventPrinter[T]{w: w, allNamespaces: allNamespaces, watchOnly: watchOnly, now: time.Now}
	cols := []string{"EVENT", "NAME", "RESOURCEVERSION", "AGE"}
	if allNamespaces {
		cols = slices.Insert(cols, 1, "NAMESPACE")
	}
	p.line(cols...)
	return p
}

func (p *eventPrinter[T]) OnAdd(obj T, inInitialList bool) {
	if inInitialList && p.watchOnly {
		return
	}
	p.print("ADDED", obj)
}

func (p *eventPrinter[T]) OnUpdate(_, obj T) { p.print("MODIFIED", obj) }

func (p *eventPrinter[T]) OnDelete(obj T, finalStateUnknown bool) {
	if finalStateUnknown {
		p.print("DELETED(missed)", obj)
		return
	}
	p.print("DELETED", obj)
}

func (p *eventPrinter[T]) print(event string, obj T) {
	age := "<unknown>"
	if ts := obj.GetCreationTimestamp(); !ts.IsZero() {
		age = duration.HumanDuration(p.now().Sub(ts.Time))
	}
	cols := []string{event, obj.GetName(), obj.GetResourceVersion(), age}
	if p.allNamespaces {
		cols = slices.Insert(cols, 1, obj.GetNamespace())
	}
	p.line(cols...)
}

// widths are the column widths; the last column is not padded.
var widths = map[int][]int{4: {16, 40, 16}, 5: {16, 20, 40, 16}}

func (p *eventPrinter[T]) line(cols ...string) {
	var b strings.Builder
	for i, c := range cols {
		if i < len(cols)-1 {
			fmt.Fprintf(&b, "%-*s ", widths[len(cols)][i], c)
		} else {
			b.WriteString(c)
		}
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(p.w, b.String())
}

// formatCounts renders a reason->count map as "Expired=2,TooManyRequests=1"
// in sorted order, or "none".
func formatCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, ",")
}
