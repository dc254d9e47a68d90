package retrywatcher

import (
	"time"

	"github.com/listwatch/listwatch/reflector"
)

// Backoff is the retry policy between watch attempts that made no progress:
// the reflector's policy, [reflector.Backoff], under the name this package
// has always used. The n-th consecutive failure waits
// min(Initial·Factor^(n-1), Max), scaled by a random factor in
// [1, 1+Jitter). Any delivered event resets it, and so does a watch that
// stayed open for at least Max. Zero fields take the RetryWatcher's
// defaults: 500ms doubling to 30s, no jitter, no ResetAfter; Slow is not
// used. [reflector.Backoff] says why they differ from the reflector's.
type Backoff = reflector.Backoff

// defaultBackoff holds the RetryWatcher's defaults; see Backoff.
var defaultBackoff = reflector.Backoff{
	Initial: 500 * time.Millisecond,
	Max:     30 * time.Second,
	Factor:  2,
}
