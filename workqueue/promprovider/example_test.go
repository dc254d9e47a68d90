package promprovider_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/workqueue"
	"github.com/listwatch/listwatch/workqueue/promprovider"
)

// A queue named "pods" exports Kubernetes' workqueue metrics to a registry.
func Example() {
	reg := prometheus.NewRegistry()
	p, err := promprovider.New(promprovider.Options{Registerer: reg})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := workqueue.New(ctx, workqueue.Options[string]{Name: "pods", MetricsProvider: p})
	q.Add("default/a")
	q.Add("default/b")

	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "workqueue_depth" || f.GetName() == "workqueue_adds_total" {
			m := f.GetMetric()[0]
			fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	q.ShutDown()
	// Output:
	// workqueue_adds_total pods 2
	// workqueue_depth pods 2
}
