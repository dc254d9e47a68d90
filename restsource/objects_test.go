package restsource_test

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/restsource"
)

// TestNewObjectsDecodesLikeNew: a Source built from a constructor (the Go
// type known only at run time, as a scheme makes its objects) lists and
// watches exactly what New's Source of the same type does, with the memory
// options, in both encodings.
func TestNewObjectsDecodesLikeNew(t *testing.T) {
	for _, ct := range contentTypes {
		srv := podsServer(t, ct, 300)
		opts := func() restsource.Options {
			return restsource.Options{Client: srv.clientset(t, ct).CoreV1().RESTClient(), Resource: "pods", ContentType: ct,
				StripManagedFields: true, Interner: restsource.NewInterner(0), ShareRepeated: true}
		}
		typed, err := restsource.New[*corev1.Pod](opts())
		if err != nil {
			t.Fatal(err)
		}
		objects, err := restsource.NewObjects(opts(), func() runtime.Object {
			o, err := scheme.Scheme.New(corev1.SchemeGroupVersion.WithKind("Pod"))
			if err != nil {
				panic(err)
			}
			return o
		})
		if err != nil {
			t.Fatal(err)
		}
		want, err := typed.ListWithContext(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := objects.ListWithContext(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		equal(t, ct+" list", got, want)
		wantW, err := typed.WatchWithContext(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gotW, err := objects.WatchWithContext(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		equal(t, ct+" events", drain(t, gotW), drain(t, wantW))
	}
}

// widget is a custom resource's Go type: no protobuf, known to a scheme.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec `json:"spec"`
	Status            struct {
		Ready bool `json:"ready"`
	} `json:"status"`
}

type widgetSpec struct {
	Size     int               `json:"size"`
	Selector map[string]string `json:"selector,omitempty"`
	Template corev1.PodSpec    `json:"template"`
}

func (w *widget) DeepCopyObject() runtime.Object {
	b, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	out := &widget{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

type widgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []widget `json:"items"`
}

func (l *widgetList) DeepCopyObject() runtime.Object { panic("not used") }

// TestNewObjectsCustomResource: objects of a custom resource's Go type that
// only the scheme knows decode from JSON with the memory options as the
// plain JSON decoding gives them, managedFields cut, metadata interned.
func TestNewObjectsCustomResource(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gv.WithKind("Widget"), &widget{})
	s.AddKnownTypeWithName(gv.WithKind("WidgetList"), &widgetList{})
	metav1.AddToGroupVersion(s, gv)
	list := widgetList{TypeMeta: metav1.TypeMeta{APIVersion: gv.String(), Kind: "WidgetList"}, ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
	for i := range 50 {
		p := testPod(i)
		list.Items = append(list.Items, widget{ObjectMeta: p.ObjectMeta, Spec: widgetSpec{Size: i % 3, Selector: p.Labels, Template: p.Spec}})
		list.Items[i].Status.Ready = i%2 == 0
	}
	body, err := json.Marshal(&list)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t)
	srv.list[js] = body
	rc, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, APIPath: "/apis", QPS: -1,
		ContentConfig: rest.ContentConfig{GroupVersion: &gv, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}})
	if err != nil {
		t.Fatal(err)
	}
	in := restsource.NewInterner(0)
	src, err := restsource.NewObjects(restsource.Options{Client: rc, Resource: "widgets", Scheme: s, ContentType: js,
		StripManagedFields: true, Interner: in, ShareRepeated: true},
		func() runtime.Object { o, _ := s.New(gv.WithKind("Widget")); return o })
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("%v (body %d bytes, %d requests: %v)", err, len(body), len(srv.requests), srv.requests[0].Header)
	}
	items := got.(*metav1.List).Items
	if len(items) != len(list.Items) {
		t.Fatalf("%d items, want %d", len(items), len(list.Items))
	}
	for i, it := range items {
		want := list.Items[i].DeepCopyObject().(*widget)
		want.ManagedFields = nil
		equal(t, fmt.Sprint("widget ", i), it.Object, runtime.Object(want))
	}
	if in.Stats().Hits == 0 {
		t.Fatal("nothing was interned")
	}
}
