package conformance_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/test/conformance"
)

// A Cluster over the fake: a paged list in key order, at the RV of the
// latest write, with the count of items left.
func ExampleFakeCluster() {
	srv, err := fake.NewServer(conformance.FakeOptions())
	if err != nil {
		panic(err)
	}
	c := conformance.NewFakeCluster(srv)
	ctx := context.Background()
	ns, _ := c.NewNamespace(ctx)
	for _, name := range []string{"c", "a", "b"} {
		if _, err := c.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			panic(err)
		}
	}
	page, err := c.ListConfigMaps(ctx, ns, metav1.ListOptions{Limit: 2})
	if err != nil {
		panic(err)
	}
	for _, cm := range page.Items {
		fmt.Println(cm.Name, cm.ResourceVersion)
	}
	fmt.Println("list RV", page.ResourceVersion, "remaining", *page.RemainingItemCount)
	// Output:
	// a 2
	// b 3
	// list RV 3 remaining 1
}
