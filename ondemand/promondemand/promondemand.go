// Package promondemand exports the figures of [ondemand.Cache]s to
// Prometheus: what each holds (objects and bytes of metadata, objects and
// bytes held whole), what its reads did (reads, hits, fetches, fetch
// errors, lists, promotions and demotions by reason) and how long its
// fetches took.
//
// # Usage
//
//	coll, err := promondemand.New(metrics.Registry) // or any prometheus.Registerer
//	secrets, err := ondemand.New(ctx, ondemand.Options[*corev1.Secret]{..., Metrics: coll.Fetches("secrets")})
//	coll.Add("secrets", secrets.Stats)
//
// Every family is labelled with the cache's name. The gauges and counters
// are read from [ondemand.Cache.Stats] when Prometheus scrapes; the fetch
// latency histogram is fed by the Cache itself through the
// [ondemand.Metrics] that [Collector.Fetches] returns.
//
// # Concurrency
//
// A Collector is safe for concurrent use; Add may be called at any time.
//
// # Testing
//
// The test scrapes a Collector over a Cache on fake.Server and checks
// every family against the Cache's Stats.
package promondemand

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/ondemand"
)

// Collector is a prometheus.Collector of ondemand caches.
type Collector struct {
	fetch *prometheus.HistogramVec

	mu     sync.Mutex
	caches map[string]func() ondemand.Stats
}

var (
	label = []string{"name"}
	descs = struct {
		objects, metadataBytes, held, pinned, heldBytes, budget           *prometheus.Desc
		reads, hits, fetches, fetchErrors, lists, behind, promotions, dem *prometheus.Desc
	}{
		objects:       prometheus.NewDesc("ondemand_objects", "Objects whose metadata the cache holds.", label, nil),
		metadataBytes: prometheus.NewDesc("ondemand_metadata_bytes", "Estimated bytes of the metadata cache.", label, nil),
		held:          prometheus.NewDesc("ondemand_held_objects", "Objects held whole.", label, nil),
		pinned:        prometheus.NewDesc("ondemand_pinned_objects", "Objects held whole from the start (Options.Hold).", label, nil),
		heldBytes:     prometheus.NewDesc("ondemand_held_bytes", "Bytes of the objects held whole, the figure the budget acts on.", label, nil),
		budget:        prometheus.NewDesc("ondemand_budget_bytes", "The budget of bytes held whole (negative: none).", label, nil),
		reads:         prometheus.NewDesc("ondemand_reads_total", "Objects read whole.", label, nil),
		hits:          prometheus.NewDesc("ondemand_hits_total", "Reads served from memory.", label, nil),
		fetches:       prometheus.NewDesc("ondemand_fetches_total", "Objects fetched from the server.", label, nil),
		fetchErrors:   prometheus.NewDesc("ondemand_fetch_errors_total", "Fetches that failed.", label, nil),
		lists:         prometheus.NewDesc("ondemand_lists_total", "Lists of whole objects from the server.", label, nil),
		behind:        prometheus.NewDesc("ondemand_behind_total", "Reads that failed because the server answered older than the cached metadata.", label, nil),
		promotions:    prometheus.NewDesc("ondemand_promotions_total", "Objects that started to be held whole.", label, nil),
		dem:           prometheus.NewDesc("ondemand_demotions_total", "Held objects that went back to metadata only, by reason.", []string{"name", "reason"}, nil),
	}
)

// New registers a Collector with reg, or returns the one registered
// there already.
func New(reg prometheus.Registerer) (*Collector, error) {
	if reg == nil {
		return nil, errors.New("promondemand: a Registerer is required")
	}
	c := &Collector{caches: map[string]func() ondemand.Stats{},
		fetch: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ondemand_fetch_duration_seconds",
			Help: "How long fetches of one object took, by result.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)},
			[]string{"name", "result"})}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*Collector); ok {
				return existing, nil
			}
		}
		return nil, err
	}
	return c, nil
}

// Add exports the cache name, whose figures stats returns (its Stats
// method). A second Add of the same name replaces the first.
func (c *Collector) Add(name string, stats func() ondemand.Stats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.caches[name] = stats
}

// Fetches returns the ondemand.Metrics of the cache name, which feeds the
// fetch latency histogram.
func (c *Collector) Fetches(name string) ondemand.Metrics {
	return fetches{ok: c.fetch.WithLabelValues(name, "ok"), failed: c.fetch.WithLabelValues(name, "error")}
}

type fetches struct{ ok, failed prometheus.Observer }

func (f fetches) Fetched(d time.Duration, err error) {
	if err != nil {
		f.failed.Observe(d.Seconds())
		return
	}
	f.ok.Observe(d.Seconds())
}
func (fetches) Promoted()                     {}
func (fetches) Demoted(ondemand.DemoteReason) {}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descs.objects, descs.metadataBytes, descs.held, descs.pinned, descs.heldBytes, descs.budget,
		descs.reads, descs.hits, descs.fetches, descs.fetchErrors, descs.lists, descs.behind, descs.promotions, descs.dem} {
		ch <- d
	}
	c.fetch.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	caches := make(map[string]func() ondemand.Stats, len(c.caches))
	for k, v := range c.caches {
		caches[k] = v
	}
	c.mu.Unlock()
	for name, stats := range caches {
		s := stats()
		g := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
		}
		n := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), name)
		}
		g(descs.objects, float64(s.Objects))
		g(descs.metadataBytes, float64(s.MetadataBytes))
		g(descs.held, float64(s.Held))
		g(descs.pinned, float64(s.Pinned))
		g(descs.heldBytes, float64(s.HeldBytes))
		g(descs.budget, float64(s.Budget))
		n(descs.reads, s.Reads)
		n(descs.hits, s.Hits)
		n(descs.fetches, s.Fetches)
		n(descs.fetchErrors, s.FetchErrors)
		n(descs.lists, s.Lists)
		n(descs.behind, s.Behind)
		n(descs.promotions, s.Promotions)
		for _, r := range []ondemand.DemoteReason{ondemand.DemotedIdle, ondemand.DemotedBudget, ondemand.DemotedChanged, ondemand.DemotedDeleted} {
			ch <- prometheus.MustNewConstMetric(descs.dem, prometheus.CounterValue, float64(s.Demotions[r]), name, string(r))
		}
	}
	c.fetch.Collect(ch)
}
