package skipped

import (
	"context"
	"testing"
)

func TestSkipped(t *testing.T) { _ = context.Background() }
