package informer_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
)

func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, _ := fake.NewServer(fake.Options{})
	srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})

	inf, _ := informer.New(informer.Options[*corev1.ConfigMap]{
		Source: srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR}),
	})
	seen := make(chan string, 10)
	inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(c *corev1.ConfigMap, initial bool) { seen <- fmt.Sprintf("add %s initial=%v", c.Name, initial) },
		DeleteFunc: func(c *corev1.ConfigMap, finalStateUnknown bool) {
			seen <- fmt.Sprintf("delete %s known=%v", c.Name, !finalStateUnknown)
		},
	}, informer.HandlerOptions{})
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()

	if err := inf.WaitForSync(ctx); err != nil {
		panic(err)
	}
	fmt.Println(<-seen)
	obj, _ := srv.Get(ctx, fake.ConfigMaps().GVR, "default", "settings")
	gone, _ := srv.Delete(ctx, obj)
	inf.WaitForResourceVersion(ctx, gone.(*corev1.ConfigMap).ResourceVersion)
	fmt.Println(<-seen)
	fmt.Println("cached:", inf.Reader().Len())
	cancel()
	<-done
	// Output:
	// add settings initial=true
	// delete settings known=true
	// cached: 0
}
