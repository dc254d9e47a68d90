//go:build !unix

package workqueue

import "time"

// processCPU is unavailable here; CPU ratios then read as NaN.
func processCPU() time.Duration { return 0 }
