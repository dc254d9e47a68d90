package informers_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/fake"
)

// serveHTTP serves srv's core/v1 resources over HTTP in JSON, as
// kube-apiserver's REST API does for lists and watches (paths, query
// parameters, Status errors, a watch as a stream of WatchEvents), and
// returns a clientset for it: the factory's restsource path on fake.Server.
func serveHTTP(t *testing.T, srv *fake.Server) kubernetes.Interface {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns, resource, ok := corePath(r.URL.Path)
		if !ok || r.Method != http.MethodGet {
			writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: r.URL.Path}, ""))
			return
		}
		var opts metav1.ListOptions
		if err := scheme.ParameterCodec.DecodeParameters(r.URL.Query(), schema.GroupVersion{Version: "v1"}, &opts); err != nil {
			writeStatus(w, apierrors.NewBadRequest(err.Error()))
			return
		}
		lw := srv.ListerWatcher(fake.LWOptions{Resource: schema.GroupVersionResource{Version: "v1", Resource: resource}, Namespace: ns})
		w.Header().Set("Content-Type", "application/json")
		if !opts.Watch {
			list, err := lw.ListWithContext(r.Context(), opts)
			if err != nil {
				writeStatus(w, err)
				return
			}
			writeJSON(w, list)
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
		enc := json.NewEncoder(w)
		for ev := range wi.ResultChan() {
			raw, err := runtime.Encode(scheme.Codecs.LegacyCodec(schema.GroupVersion{Version: "v1"}), ev.Object)
			if err != nil {
				t.Errorf("encoding a watch event: %v", err)
				return
			}
			if enc.Encode(metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}}) != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(hs.Close)
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: hs.URL})
}

// corePath splits /api/v1/pods and /api/v1/namespaces/NS/pods.
func corePath(p string) (namespace, resource string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/api/v1/"), "/")
	switch {
	case len(parts) == 1:
		return "", parts[0], true
	case len(parts) == 3 && parts[0] == "namespaces":
		return parts[1], parts[2], true
	}
	return "", "", false
}

func writeJSON(w http.ResponseWriter, obj runtime.Object) {
	data, err := runtime.Encode(scheme.Codecs.LegacyCodec(schema.GroupVersion{Version: "v1"}), obj)
	if err != nil {
		writeStatus(w, err)
		return
	}
	_, _ = w.Write(data)
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
