package promprovider

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/listwatch/listwatch/workqueue"
)

func TestProviderRecordsQueueMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := New(Options{Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		q := workqueue.New(t.Context(), workqueue.Options[string]{Name: "pods", MetricsProvider: p})
		defer q.ShutDown()
		q.Add("a")
		q.Add("b")
		q.AddAfter("c", time.Second)
		time.Sleep(time.Second)
		item, _ := q.Get()
		time.Sleep(700 * time.Millisecond)
		synctest.Wait()
		checks := map[string]float64{
			"depth":   value(t, p.depth.WithLabelValues("pods")),
			"adds":    value(t, p.adds.WithLabelValues("pods")),
			"retries": value(t, p.retries.WithLabelValues("pods")),
			"longest": value(t, p.longest.WithLabelValues("pods")),
		}
		want := map[string]float64{"depth": 2, "adds": 3, "retries": 1, "longest": 0.5}
		for k, v := range want {
			if checks[k] != v {
				t.Errorf("%s = %v, want %v", k, checks[k], v)
			}
		}
		q.Done(item)
		if mfs, err := reg.Gather(); err != nil || len(mfs) != 7 {
			t.Errorf("gathered %d metric families (err %v), want 7", len(mfs), err)
		}
	})
}

func TestProviderServesClientGoQueues(t *testing.T) {
	p, err := New(Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	q := cgworkqueue.NewTypedWithConfig(cgworkqueue.TypedQueueConfig[string]{Name: "cg", MetricsProvider: p})
	defer q.ShutDown()
	q.Add("a")
	if v := value(t, p.adds.WithLabelValues("cg")); v != 1 {
		t.Fatalf("adds = %v, want 1", v)
	}
}

func TestNewReusesRegisteredCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	p1, err := New(Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := New(Options{Registerer: reg})
	if err != nil {
		t.Fatalf("second New on the same registry: %v", err)
	}
	p1.NewAddsMetric("x").Inc()
	if v := value(t, p2.adds.WithLabelValues("x")); v != 1 {
		t.Fatalf("second provider does not share collectors: adds = %v", v)
	}
}

func TestNewReportsConflicts(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth", Help: "other"}))
	if _, err := New(Options{Registerer: reg}); err == nil {
		t.Fatal("New succeeded despite a conflicting collector")
	}
}

// value reads a gauge or counter.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if out.Gauge != nil {
		return out.Gauge.GetValue()
	}
	return out.Counter.GetValue()
}
