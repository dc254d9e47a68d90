// Package fakehttp serves a fake.Server's lists and watches over HTTP, as
// kube-apiserver's REST API serves them, for tests of code that reaches
// the server through a rest.Config (clientsets, restsource,
// controller-runtime's cache): the paths /api/v1/[namespaces/NS/]RESOURCE
// and /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE, client-go's query
// parameters, Status errors with their codes, a watch as a stream of
// WatchEvents. Everything is JSON (clients asking for protobuf also accept
// JSON, as kube-apiserver answers for types it cannot encode in
// protobuf); a request whose Accept header asks for metadata only
// (as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, as client-go's
// metadata client sends) gets PartialObjectMetadata objects, as from
// kube-apiserver. Only GET is served: the test writes through the
// fake.Server.
//
// Nothing here is for users: code outside this module cannot import it.
package fakehttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/fake"
)

// Serve serves srv on a loopback httptest server, closed when t ends, and
// returns a rest.Config for it; an object it cannot encode fails t.
func Serve(t testing.TB, srv *fake.Server) *rest.Config {
	t.Helper()
	hs := httptest.NewServer(Handler(srv, func(err error) { t.Errorf("fakehttp: %v", err) }))
	t.Cleanup(hs.Close)
	return &rest.Config{Host: hs.URL}
}

// Handler serves srv. Objects are encoded with client-go's scheme (typed
// resources) or as they are (unstructured ones); a watch event it cannot
// encode ends the watch and is handed to report.
func Handler(srv *fake.Server, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(srv, report, w, r)
	})
}

func serve(srv *fake.Server, report func(error), w http.ResponseWriter, r *http.Request) {
	gvr, ns, ok := parsePath(r.URL.Path)
	if !ok || r.Method != http.MethodGet {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: r.URL.Path}, ""))
		return
	}
	var opts metav1.ListOptions
	if err := scheme.ParameterCodec.DecodeParameters(r.URL.Query(), schema.GroupVersion{Version: "v1"}, &opts); err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	metadataOnly := strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata")
	enc := encoder{gv: gvr.GroupVersion(), metadataOnly: metadataOnly}
	lw := srv.ListerWatcher(fake.LWOptions{Resource: gvr, Namespace: ns})
	w.Header().Set("Content-Type", "application/json")
	if !opts.Watch {
		list, err := lw.ListWithContext(r.Context(), opts)
		if err != nil {
			writeStatus(w, err)
			return
		}
		data, err := enc.list(list)
		if err != nil {
			writeStatus(w, err)
			return
		}
		_, _ = w.Write(data)
		return
	}
	wi, err := lw.WatchWithContext(r.Context(), opts)
	if err != nil {
		writeStatus(w, err)
		return
	}
	defer wi.Stop()
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	out := json.NewEncoder(w)
	for ev := range wi.ResultChan() {
		raw, err := enc.object(ev.Object)
		if err != nil {
			report(fmt.Errorf("encoding a watch event: %w", err))
			return
		}
		if out.Encode(metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}}) != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// parsePath splits /api/v1[/namespaces/NS]/RESOURCE and
// /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE.
func parsePath(p string) (gvr schema.GroupVersionResource, namespace string, ok bool) {
	var rest []string
	switch parts := strings.Split(strings.Trim(p, "/"), "/"); {
	case len(parts) >= 3 && parts[0] == "api":
		gvr.Version, rest = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gvr.Group, gvr.Version, rest = parts[1], parts[2], parts[3:]
	default:
		return gvr, "", false
	}
	switch {
	case len(rest) == 1:
		gvr.Resource = rest[0]
	case len(rest) == 3 && rest[0] == "namespaces":
		namespace, gvr.Resource = rest[1], rest[2]
	default:
		return gvr, "", false
	}
	return gvr, namespace, true
}

// encoder encodes the objects of one group version, in full or as
// metadata only.
type encoder struct {
	gv           schema.GroupVersion
	metadataOnly bool
}

var metaV1 = metav1.SchemeGroupVersion.String()

func (e encoder) object(obj runtime.Object) ([]byte, error) {
	if _, isStatus := obj.(*metav1.Status); isStatus || !e.metadataOnly {
		return runtime.Encode(scheme.Codecs.LegacyCodec(e.gv), obj)
	}
	m, err := partial(obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

func (e encoder) list(list runtime.Object) ([]byte, error) {
	if !e.metadataOnly {
		return runtime.Encode(scheme.Codecs.LegacyCodec(e.gv), list)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{
		TypeMeta: metav1.TypeMeta{APIVersion: metaV1, Kind: "PartialObjectMetadataList"},
		ListMeta: metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(), RemainingItemCount: lm.GetRemainingItemCount()},
	}
	for _, item := range items {
		m, err := partial(item)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *m)
	}
	return json.Marshal(out)
}

// partial is obj's metadata as a PartialObjectMetadata.
func partial(obj runtime.Object) (*metav1.PartialObjectMetadata, error) {
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: metaV1, Kind: "PartialObjectMetadata"}}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		md, _ := o.Object["metadata"].(map[string]any)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &m.ObjectMeta); err != nil {
			return nil, err
		}
	case metav1.ObjectMetaAccessor:
		om, ok := o.GetObjectMeta().(*metav1.ObjectMeta)
		if !ok {
			return nil, errors.New("fakehttp: an object without a metav1.ObjectMeta")
		}
		m.ObjectMeta = *om.DeepCopy()
	default:
		return nil, errors.New("fakehttp: an object without metadata")
	}
	return m, nil
}

func writeStatus(w http.ResponseWriter, err error) {
	var se apierrors.APIStatus
	status := metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()}
	if errors.As(err, &se) {
		status = se.Status()
	}
	status.Kind, status.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
}
