package builtin_test

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/restsource"
	"github.com/listwatch/listwatch/restsource/builtin"
)

// Every type is found by its example and by its resource, and builds a
// Source (over a REST client that is never contacted).
func TestEveryTypeBuildsASource(t *testing.T) {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	all := builtin.All()
	if len(all) < 50 {
		t.Fatalf("%d types; client-go's factory serves more than 50", len(all))
	}
	for _, typ := range all {
		if got, ok := builtin.ForObject(typ.Example); !ok || got.GVR != typ.GVR {
			t.Errorf("ForObject(%T) = %v, %v; want %v", typ.Example, got.GVR, ok, typ.GVR)
		}
		if got, ok := builtin.ForResource(typ.GVR); !ok || reflect.TypeOf(got.Example) != reflect.TypeOf(typ.Example) {
			t.Errorf("ForResource(%v) = %T, %v; want %T", typ.GVR, got.Example, ok, typ.Example)
		}
		lw, err := typ.New(restsource.Options{Client: cs.CoreV1().RESTClient(), Resource: typ.GVR.Resource})
		if err != nil || lw == nil {
			t.Errorf("%v: New = %v, %v", typ.GVR, lw, err)
		}
	}
}

// The table's facts, for two types; and what is not built in.
func TestLookups(t *testing.T) {
	pods, ok := builtin.ForObject(&corev1.Pod{})
	if !ok || pods.GVR != (schema.GroupVersionResource{Version: "v1", Resource: "pods"}) || !pods.Namespaced {
		t.Errorf("pods: %+v, %v", pods, ok)
	}
	roles, ok := builtin.ForResource(rbacv1.SchemeGroupVersion.WithResource("clusterroles"))
	if _, isRole := roles.Example.(*rbacv1.ClusterRole); !ok || !isRole || roles.Namespaced {
		t.Errorf("clusterroles: %+v, %v", roles, ok)
	}
	if _, ok := builtin.ForObject(&corev1.PodList{}); ok {
		t.Error("a list type is not a built-in type of the table")
	}
	if _, ok := builtin.ForResource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}); ok {
		t.Error("a custom resource is not built in")
	}
	if _, ok := builtin.ForObject(nil); ok {
		t.Error("nil is not built in")
	}
}

// A Source for a type known only by an example object.
func ExampleForObject() {
	t, ok := builtin.ForObject(&corev1.ConfigMap{})
	fmt.Println(t.GVR.Resource, t.Namespaced, ok)
	// With a clientset's REST client of the type's group version:
	//	lw, err := t.New(restsource.Options{Client: clientset.CoreV1().RESTClient(), Resource: t.GVR.Resource})
	// Output: configmaps true true
}
