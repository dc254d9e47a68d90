package restsource_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/restsource"
)

type podT = corev1.Pod

const (
	pb = restsource.ContentTypeProtobuf
	js = restsource.ContentTypeJSON
)

var contentTypes = []string{pb, js}

// enc encodes objects and watch frames as kube-apiserver does.
type enc struct {
	ct       string
	obj, evt runtime.Encoder
}

func newEnc(ct string) enc {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), ct)
	if !ok {
		panic(ct)
	}
	return enc{ct: ct,
		obj: scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion),
		evt: scheme.Codecs.EncoderForVersion(info.StreamSerializer.Serializer, schema.GroupVersion{Version: "v1"})}
}

func (e enc) object(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	b, err := runtime.Encode(e.obj, obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawFrame frames an event whose object is already encoded.
func (e enc) rawFrame(t testing.TB, typ string, raw []byte) []byte {
	t.Helper()
	ev, err := runtime.Encode(e.evt, &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}})
	if err != nil {
		t.Fatal(err)
	}
	return e.frameBytes(ev)
}

// frameBytes frames one encoded WatchEvent for the stream.
func (e enc) frameBytes(ev []byte) []byte {
	if e.ct == pb {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...)
	}
	return ev // the JSON encoder ends each object with a newline
}

func (e enc) frame(t testing.TB, typ watch.EventType, obj runtime.Object) []byte {
	return e.rawFrame(t, string(typ), e.object(t, obj))
}

// withUnknownField adds a field the client does not know to an encoded
// pod: field 999 in protobuf, "someFutureField" in JSON.
func (e enc) withUnknownField(t testing.TB, raw []byte) []byte {
	t.Helper()
	if e.ct == js {
		return append([]byte(`{"someFutureField":{"a":[1,2,"x"]},`), raw[1:]...)
	}
	var u runtime.Unknown
	if err := u.Unmarshal(raw[4:]); err != nil {
		t.Fatal(err)
	}
	u.Raw = append(u.Raw, 0xba, 0x3e, 3, 'a', 'b', 'c') // field 999, bytes, "abc"
	out, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), out...)
}

// testPod is a pod with most kinds of fields set. It is not
// objects.RealisticPod on purpose: it carries what the decoders' edge cases
// need and a realistic pod lacks (a generation, a finalizer, an annotation
// of escapes and non-ASCII), and the tests expect its names (pod-<i>).
func testPod(i int) *corev1.Pod {
	ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("pod-%d", i), Namespace: fmt.Sprintf("ns-%d", i%3), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			ResourceVersion: fmt.Sprint(100 + i), Generation: int64(i), CreationTimestamp: ts,
			Labels:          map[string]string{"app": "web", "i": fmt.Sprint(i)},
			Annotations:     map[string]string{"note": "ünïcødé \"quoted\" \\ back\nslash"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)}},
			Finalizers:      []string{"example.com/f"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
				Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`)}},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", i%5),
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.example/app:1.2.3", Args: []string{"--port", "8080"},
				Env:   []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				},
			}},
			TerminationGracePeriodSeconds: ptr.To(int64(30)),
			Tolerations:                   []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ts}},
			PodIP:      "10.0.0.1", StartTime: &ts,
		},
	}
}

// server is an httptest apiserver for pods that serves canned bytes: the
// watch body (as one stream) and the list body, and records the requests.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	watch    map[string][]byte // content type → stream
	list     map[string][]byte
	errCode  int    // if set, every request fails with this status
	errBody  []byte // and this body (JSON)
	requests []*http.Request
	// block, if set, keeps watch streams open after the canned bytes until
	// the request ends.
	block bool
}

func newServer(t testing.TB) *server {
	s := &server{watch: map[string][]byte{}, list: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() { s.CloseClientConnections(); s.Close() })
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	code, body, block := s.errCode, s.errBody, s.block
	ct := js
	if bytes.Contains([]byte(r.Header.Get("Accept")), []byte("protobuf")) {
		ct = pb
	}
	watchBody, listBody := s.watch[ct], s.list[ct]
	s.mu.Unlock()
	if code != 0 {
		w.Header().Set("Content-Type", js)
		w.WriteHeader(code)
		_, _ = w.Write(body)
		return
	}
	if r.URL.Query().Get("watch") != "true" {
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(listBody)
		return
	}
	if ct == pb {
		ct += ";stream=watch"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(watchBody)
	w.(http.Flusher).Flush()
	if block {
		<-r.Context().Done()
	}
}

func (s *server) config(ct string) *rest.Config {
	return &rest.Config{Host: s.URL, ContentConfig: rest.ContentConfig{ContentType: ct}, QPS: -1}
}

func (s *server) clientset(t testing.TB, ct string) kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(s.config(ct))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func (s *server) source(t testing.TB, ct string, workers int) *restsource.Source[*corev1.Pod, corev1.Pod] {
	src, err := restsource.New[*corev1.Pod](restsource.Options{Client: s.clientset(t, ct).CoreV1().RESTClient(),
		Resource: "pods", ContentType: ct, DecodeWorkers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// drain collects the events of w until its channel closes.
func drain(t testing.TB, w watch.Interface) []watch.Event {
	t.Helper()
	var out []watch.Event
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout.C:
			t.Fatalf("watch not closed after 30s (%d events)", len(out))
		}
	}
}

// equal fails the test unless got and want are deeply equal.
func equal(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s differ from client-go's (-client-go +restsource):\n%s", what, cmp.Diff(want, got))
	}
}

var _ = context.Background

// podsServer is a server that answers a list of n test pods (resource
// version 77) and the standard watch stream, encoded as ct.
func podsServer(t testing.TB, ct string, n int) *server {
	e := newEnc(ct)
	srv := newServer(t)
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "77"}}
	for i := range n {
		l.Items = append(l.Items, *testPod(i))
	}
	srv.list[ct] = e.object(t, l)
	srv.watch[ct] = watchStream(t, e)
	return srv
}
