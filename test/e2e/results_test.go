package e2e

import (
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// resultRow is one library's measured outcome in one scenario.
type resultRow struct {
	Scenario, Lib string
	// Objects is the number of objects in the cache when measured.
	Objects int
	// Adds, Updates, Deletes count handler calls.
	Adds, Updates, Deletes int64
	// Requests are the counts of the library's own HTTP client.
	Requests requestCounts
	// Converge is the time the scenario measures (sync, convergence or
	// recovery; Note says which), 0 when not applicable.
	Converge time.Duration
	Note     string
}

// results collects rows from every spec; printed by AfterSuite.
var results struct {
	mu   sync.Mutex
	rows []resultRow
}

// record adds a row for s in scenario.
func record(scenario string, s side, converge time.Duration, note string) {
	ev := s.events()
	row := resultRow{
		Scenario: scenario,
		Lib:      s.lib(),
		Objects:  len(s.state()),
		Adds:     ev.adds.Load(),
		Updates:  ev.updates.Load(),
		Deletes:  ev.deletes.Load(),
		Requests: s.requests().snapshot(),
		Converge: converge,
		Note:     note,
	}
	recordRow(row)
}

func recordRow(row resultRow) {
	results.mu.Lock()
	results.rows = append(results.rows, row)
	results.mu.Unlock()
	GinkgoWriter.Printf("result: %+v\n", row)
}

// resultsTable renders the collected rows as an aligned text table, or ""
// when no spec recorded any.
func resultsTable() string {
	results.mu.Lock()
	defer results.mu.Unlock()
	if len(results.rows) == 0 {
		return ""
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tlibrary\tobjects\tadds\tupdates\tdeletes\tlist reqs\tlist cycles\twatch reqs\tstreaming\trequests\ttime\tnote")
	for _, r := range results.rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n",
			r.Scenario, r.Lib, r.Objects, r.Adds, r.Updates, r.Deletes,
			r.Requests.Lists, r.Requests.ListCycles, r.Requests.Watches, r.Requests.Streaming, r.Requests.Total,
			r.Converge.Round(time.Millisecond), r.Note)
	}
	_ = tw.Flush()
	return b.String()
}
