package statuspage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/informer/statuspage"
)

// Handler serves every informer of a factory as an HTML page, or as JSON to
// ?format=json.
func ExampleHandler() {
	ctx := context.Background()
	srv, _ := fake.NewServer(fake.Options{})
	defer srv.CloseWatches(fake.GVR{})
	srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})

	f := factory.New(factory.Options{})
	defer f.Shutdown()
	gvr := fake.ConfigMaps().GVR
	cms, err := factory.For(f, gvr.String(), factory.Selection{}, func(factory.Selection) cache.ListerWatcherWithContext {
		return srv.ListerWatcher(fake.LWOptions{Resource: gvr})
	}, informer.Options[*corev1.ConfigMap]{Name: "configmaps"})
	if err != nil {
		log.Fatal(err)
	}
	cms.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.Start(runCtx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		log.Fatal(err)
	}

	h := statuspage.Handler(f, statuspage.Options{}) // e.g. mux.Handle("/informers", h)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/informers?format=json", nil))
	var rep statuspage.Report
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		log.Fatal(err)
	}
	for _, inf := range rep.Informers {
		fmt.Printf("%s (%s): row informer-%s, synced %v, healthy %v, %d objects, %d handler(s)\n",
			inf.Name, inf.Resource, inf.ID, inf.Synced, inf.Healthy, inf.Objects, len(inf.Handlers))
	}
	// Output:
	// configmaps (v1/configmaps): row informer-configmaps, synced true, healthy true, 1 objects, 1 handler(s)
}
