package restsource_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/restsource"
)

// A Source lists and watches pods through a clientset's REST client and
// returns typed objects; it is a cache.ListerWatcher, so it fits
// reflector.FromListerWatcher and cache.NewSharedIndexInformer.
func Example() {
	// A stand-in apiserver with one pod, answering in JSON.
	apiserver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},`+
			`"items":[{"metadata":{"name":"web","namespace":"default"},"spec":{"nodeName":"n1"}}]}`)
	}))
	defer apiserver.Close()
	clientset := kubernetes.NewForConfigOrDie(&rest.Config{Host: apiserver.URL})

	src, err := restsource.New[*corev1.Pod](restsource.Options{
		Client:           clientset.CoreV1().RESTClient(),
		Resource:         "pods",
		Namespace:        "default",
		TweakListOptions: func(o *metav1.ListOptions) { o.LabelSelector = "app=web" },
	})
	if err != nil {
		panic(err)
	}
	list, err := src.ListWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(err)
	}
	items, _ := meta.ExtractListWithAlloc(list)
	rv, _ := meta.ListAccessor(list)
	for _, obj := range items {
		p := obj.(*corev1.Pod)
		fmt.Println(p.Namespace+"/"+p.Name, "on", p.Spec.NodeName, "at list RV", rv.GetResourceVersion())
	}
	// Output:
	// default/web on n1 at list RV 7
}
