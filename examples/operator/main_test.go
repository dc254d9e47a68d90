package operator

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Ginkgo keeps its SIGINT/SIGTERM handler goroutine for the life of the
	// process. apimachinery's watch.Filter goroutine blocks forever in a
	// send once its reader is gone (Stop cannot reach it); controller-runtime
	// wraps every metadata-only watch in one, and client-go's reflector
	// leaves one behind per stopped metadata informer (listwatch's does
	// not: run the e2e suite focused on listwatch without this line to see).
	// Everything else must be gone when the tests end.
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"),
		goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"))
}
