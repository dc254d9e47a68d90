package fake

import (
	"testing"

	"go.uber.org/goleak"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

func TestMain(m *testing.M) {
	// apimachinery rate-limits HandleError with a backoff started at process
	// init on the real clock; inside a synctest bubble (year 2000) it would
	// sleep for decades. Keep only the logging handler.
	utilruntime.ErrorHandlers = utilruntime.ErrorHandlers[:1]
	goleak.VerifyTestMain(m)
}
