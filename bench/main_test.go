package bench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// closingM closes the shared httptest servers after the run, before
// goleak looks for leftover goroutines.
type closingM struct{ m *testing.M }

func (c closingM) Run() int {
	code := c.m.Run()
	closeServers()
	return code
}

func TestMain(m *testing.M) {
	if code, ok := realChildMain(); ok { // a child of BenchmarkRealMemory
		os.Exit(code)
	}
	goleak.VerifyTestMain(closingM{m})
}
