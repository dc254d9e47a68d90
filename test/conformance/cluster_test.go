package conformance

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

func TestNewRealClusterRejectsBadOptions(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	for name, opts := range map[string]RealOptions{
		"no admin":         {Unprivileged: cfg},
		"no unprivileged":  {Admin: cfg},
		"negative timeout": {Admin: cfg, Unprivileged: cfg, CompactionTimeout: -1},
		"negative poll":    {Admin: cfg, Unprivileged: cfg, CompactionPoll: -1},
	} {
		t.Run(name, func(t *testing.T) {
			if c, err := NewRealCluster(opts); err == nil {
				t.Fatalf("NewRealCluster(%s) = %v, want an error", name, c)
			}
		})
	}
}

func TestRealClusterWithoutCompactionTimeoutCannotCompact(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	c, err := NewRealCluster(RealOptions{Admin: cfg, Unprivileged: cfg})
	if err != nil {
		t.Fatal(err)
	}
	// Fails before any request: nothing listens at port 1.
	if _, err := c.Compact(t.Context(), "ns"); err == nil || !strings.Contains(err.Error(), "CompactionTimeout is zero") {
		t.Fatalf("Compact = %v, want the CompactionTimeout error", err)
	}
}
