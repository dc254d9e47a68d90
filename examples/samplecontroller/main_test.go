package samplecontroller

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Ginkgo keeps its SIGINT/SIGTERM handler goroutine for the life of
	// the process; everything else must be gone when the tests end.
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"))
}
