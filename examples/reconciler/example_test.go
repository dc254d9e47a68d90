package reconciler_test

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/reconciler"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
)

// A source ConfigMap gets its mirror, which comes back through the informer
// as an event once the controller has written it.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	srv, _ := fake.NewServer(fake.Options{})
	inf, _ := informer.New(informer.Options[*corev1.ConfigMap]{
		Source: srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR}),
	})
	c, _ := reconciler.New(ctx, reconciler.Options{Informer: inf, Writer: &reconciler.FakeWriter{Server: srv}})
	mirrored := make(chan *corev1.ConfigMap, 1)
	inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(cm *corev1.ConfigMap, _ bool) {
		if cm.Name == "app-mirror" {
			mirrored <- cm
		}
	}}, informer.HandlerOptions{})
	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(ctx) })
	wg.Go(func() { c.Run(ctx, 2) })

	srv.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app", Labels: map[string]string{reconciler.SourceLabel: "true"}},
		Data:       map[string]string{"color": "blue"},
	})
	m := <-mirrored
	fmt.Println(m.Name, m.Data["color"])
	cancel()
	wg.Wait()
	// Output: app-mirror blue
}
