package bench

import (
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
	goleak.VerifyTestMain(closingM{m})
}
