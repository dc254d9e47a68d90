package promondemand_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/listwatch/listwatch/ondemand"
	"github.com/listwatch/listwatch/ondemand/promondemand"
)

func TestCollectorExportsStats(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := promondemand.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	c.Add("secrets", func() ondemand.Stats {
		return ondemand.Stats{Objects: 10, MetadataBytes: 1000, Held: 2, HeldBytes: 300, Budget: 1 << 20, Reads: 7, Hits: 5, Fetches: 2,
			Promotions: 2, Demotions: map[ondemand.DemoteReason]int64{ondemand.DemotedChanged: 1}}
	})
	c.Fetches("secrets").Fetched(3*time.Millisecond, nil)
	want := `
# HELP ondemand_held_objects Objects held whole.
# TYPE ondemand_held_objects gauge
ondemand_held_objects{name="secrets"} 2
# HELP ondemand_hits_total Reads served from memory.
# TYPE ondemand_hits_total counter
ondemand_hits_total{name="secrets"} 5
# HELP ondemand_demotions_total Held objects that went back to metadata only, by reason.
# TYPE ondemand_demotions_total counter
ondemand_demotions_total{name="secrets",reason="Budget"} 0
ondemand_demotions_total{name="secrets",reason="Changed"} 1
ondemand_demotions_total{name="secrets",reason="Deleted"} 0
ondemand_demotions_total{name="secrets",reason="Idle"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ondemand_held_objects", "ondemand_hits_total", "ondemand_demotions_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c, "ondemand_fetch_duration_seconds"); n != 2 {
		t.Fatalf("%d fetch histograms; want 2 (ok, error)", n)
	}
}
