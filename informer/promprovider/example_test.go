package promprovider_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/informer/promprovider"
	"github.com/listwatch/listwatch/reflector"
)

// One call registers the metrics of every informer of a factory; the
// reflector's counters are wired per informer.
func ExampleRegister() {
	ctx := context.Background()
	srv, _ := fake.NewServer(fake.Options{})
	defer srv.CloseWatches(fake.GVR{})
	srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})

	reg := prometheus.NewRegistry() // controller-runtime: metrics.Registry
	f := factory.New(factory.Options{})
	defer f.Shutdown()
	p, err := promprovider.Register(reg, f)
	if err != nil {
		log.Fatal(err)
	}
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	_, err = factory.For(f, gvr.String(), factory.Selection{},
		func(factory.Selection) cache.ListerWatcherWithContext {
			return srv.ListerWatcher(fake.LWOptions{Resource: gvr})
		},
		informer.Options[*corev1.ConfigMap]{Name: "configmaps",
			Reflector: reflector.Config[*corev1.ConfigMap]{Metrics: p.Reflector("configmaps")}})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.Start(runCtx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		log.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "informer_cache_objects", "informer_synced", "informer_reflector_watches_total":
			m := mf.GetMetric()[0]
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			fmt.Println(mf.GetName(), labels, m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	// Output:
	// informer_cache_objects [group= name=configmaps resource=configmaps version=v1] 1
	// informer_reflector_watches_total [group= name=configmaps resource=configmaps version=v1] 1
	// informer_synced [group= name=configmaps resource=configmaps version=v1] 1
}
