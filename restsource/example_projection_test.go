package restsource_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/restsource"
)

// PodPlacement is a projection of corev1.Pod: the metadata, the node and
// the phase, with the JSON names and protobuf numbers of corev1.Pod's own
// fields (copied from its struct tags). Nothing else of a pod is decoded
// or kept.
type PodPlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec              struct {
		NodeName string `json:"nodeName,omitempty" protobuf:"bytes,10,opt,name=nodeName"`
	} `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status struct {
		Phase corev1.PodPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=PodPhase"`
	} `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// DeepCopyObject makes PodPlacement a runtime.Object.
func (p *PodPlacement) DeepCopyObject() runtime.Object {
	q := *p
	p.ObjectMeta.DeepCopyInto(&q.ObjectMeta)
	return &q
}

// An informer of a projection: Options.ProjectionOf says which type the
// server serves, and the informer caches PodPlacements decoded straight
// from the pods' bytes (protobuf or JSON), with managedFields skipped and
// strings interned.
func ExampleNew_projection() {
	// A stand-in apiserver with one pod, answering in JSON; watches end at
	// once.
	apiserver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "" {
			return
		}
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[`+
			`{"metadata":{"name":"web","namespace":"default","managedFields":[{"manager":"kubectl"}]},`+
			`"spec":{"nodeName":"n1","containers":[{"name":"web","image":"nginx"}]},"status":{"phase":"Running"}}]}`)
	}))
	defer apiserver.Close()
	clientset := kubernetes.NewForConfigOrDie(&rest.Config{Host: apiserver.URL})

	src, err := restsource.New[*PodPlacement](restsource.Options{
		Client:             clientset.CoreV1().RESTClient(),
		Resource:           "pods",
		ProjectionOf:       &corev1.Pod{},
		StripManagedFields: true,
		Interner:           restsource.NewInterner(0),
	})
	if err != nil {
		panic(err)
	}
	inf, err := informer.New(informer.Options[*PodPlacement]{Source: reflector.FromListerWatcher(src)})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := inf.WaitForSync(ctx); err != nil {
		panic(err)
	}
	p, _ := inf.Reader().Namespace("default").Get("web")
	fmt.Println(p.Name, "on", p.Spec.NodeName, p.Status.Phase, "managedFields:", len(p.ManagedFields))

	// The same Source serves client-go's informers.
	_ = cache.NewSharedIndexInformer(src, &PodPlacement{}, 0, cache.Indexers{})
	// Output:
	// web on n1 Running managedFields: 0
}
