package gvrfactory

import (
	"reflect"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/restsource"
)

// RESTClientOf returns the REST client behind client-go's metadata client
// (*metadata.Client, as metadata.NewForConfig and NewForConfigAndClient
// return it) or dynamic client (*dynamic.DynamicClient), for restsource to
// list and watch through: the same base URL, transport, authentication,
// rate limiter and warning handler. The clients keep it in an unexported
// field, which is read by reflection after checking its name and type
// (TestRESTClientOf pins both for the client-go version in go.mod). For
// any other implementation (client-go's fakes, a user's wrapper), a nil
// client, or a client-go whose structs no longer match, it returns nil
// and why: the caller then lists and watches through the client itself.
func RESTClientOf(client any) (rest.Interface, string) {
	var want reflect.Type
	switch c := client.(type) {
	case *metadata.Client:
		if c == nil {
			return nil, "a nil *metadata.Client"
		}
		want = reflect.TypeFor[*rest.RESTClient]()
	case *dynamic.DynamicClient:
		if c == nil {
			return nil, "a nil *dynamic.DynamicClient"
		}
		want = reflect.TypeFor[rest.Interface]()
	case nil:
		return nil, "no client"
	default:
		return nil, reflect.TypeOf(client).String() + " is not the client metadata.NewForConfig or dynamic.NewForConfig returns"
	}
	v := reflect.ValueOf(client).Elem()
	f := v.FieldByName("client")
	if !f.IsValid() || f.Type() != want {
		return nil, v.Type().String() + " has no field client of type " + want.String() + " in this client-go version"
	}
	rc, _ := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(rest.Interface)
	if nilcheck.Is(rc) {
		return nil, v.Type().String() + " has no REST client"
	}
	return rc, ""
}

// REST is the REST client of a metadata or dynamic client, for restsource.
type REST struct{ client rest.Interface }

// RESTOf returns client's REST client (RESTClientOf), or nil after a log
// line naming pkg that says why its informers decode through the client
// (client-go's decoding) instead.
func RESTOf(client any, pkg string) *REST {
	rc, why := RESTClientOf(client)
	if rc == nil {
		klog.Background().Info(pkg+": informers list and watch through the client (client-go's decoding), not restsource", "reason", why)
		return nil
	}
	return &REST{client: rc}
}

// Options are restsource's options for gvr in namespace (all if ""),
// tweaked by tweak, through r.
func (r *REST) Options(gvr schema.GroupVersionResource, namespace string, tweak func(*metav1.ListOptions)) restsource.Options {
	return restsource.Options{Client: r.client, GroupVersion: gvr.GroupVersion(), Resource: gvr.Resource, Namespace: namespace, TweakListOptions: tweak}
}
