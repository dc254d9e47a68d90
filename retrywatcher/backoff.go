package retrywatcher

import (
	"time"

	"github.com/listwatch/listwatch/reflector"
)

// defaultBackoff holds the RetryWatcher's defaults; see Options.Backoff.
var defaultBackoff = reflector.Backoff{
	Initial: 500 * time.Millisecond,
	Max:     30 * time.Second,
	Factor:  2,
}
