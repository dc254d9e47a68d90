package bench

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/restsource"
)

const (
	protobufType = runtime.ContentTypeProtobuf
	jsonType     = runtime.ContentTypeJSON
)

// codec encodes objects and watch frames in one content type, as
// kube-apiserver does: a watch frame is a WatchEvent whose object is the
// already encoded pod, framed for the stream.
type codec struct {
	contentType, watchType string
	obj, event             runtime.Encoder
	framer                 runtime.Framer
}

func newCodec(contentType string) codec {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), contentType)
	if !ok || info.StreamSerializer == nil {
		panic("no stream serializer for " + contentType)
	}
	watchType := contentType
	if contentType == protobufType {
		watchType += ";stream=watch"
	}
	return codec{contentType: contentType, watchType: watchType,
		obj:    scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion),
		event:  scheme.Codecs.EncoderForVersion(info.StreamSerializer.Serializer, schema.GroupVersion{Version: "v1"}),
		framer: info.StreamSerializer.Framer}
}

func (c codec) encode(obj runtime.Object) []byte {
	data, err := runtime.Encode(c.obj, obj)
	if err != nil {
		panic(err)
	}
	return data
}

func (c codec) frame(t watch.EventType, obj runtime.Object) []byte {
	ev, err := runtime.Encode(c.event, &metav1.WatchEvent{Type: string(t), Object: runtime.RawExtension{Raw: c.encode(obj)}})
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if _, err := c.framer.NewFrameWriter(&buf).Write(ev); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// podServer is an httptest apiserver for pods in every namespace, serving
// pre-encoded bytes in JSON or protobuf: list pages (limit/continue),
// streaming lists (sendInitialEvents: ADDED frames and the
// initial-events-end bookmark) and then live watch frames: the benchmark
// sends the index of a pre-encoded event on live.
type podServer struct {
	srv   *httptest.Server
	items []corev1.Pod
	live  chan int

	mu     sync.Mutex
	pages  map[string][]byte   // guarded by mu; content type|limit|continue → encoded list
	adds   map[string][][]byte // guarded by mu; content type → ADDED frame per item
	events map[string][][]byte // guarded by mu; content type → live event frames
	evSrc  []watch.Event       // the live events' source
	codecs map[string]codec    // read-only after construction
}

var (
	serversMu sync.Mutex
	servers   = map[serverKey]*podServer{} // one server per item set
)

type serverKey struct {
	first *corev1.Pod
	n     int
}

// closeServers closes every podServer (TestMain, after the benchmarks).
func closeServers() {
	serversMu.Lock()
	defer serversMu.Unlock()
	for k, s := range servers {
		s.srv.CloseClientConnections()
		s.srv.Close()
		delete(servers, k)
	}
}

// podServerFor returns the server for items, started on first use and
// kept until closeServers.
func podServerFor(b testing.TB, items []corev1.Pod) *podServer {
	serversMu.Lock()
	defer serversMu.Unlock()
	key := serverKey{&items[0], len(items)}
	if s := servers[key]; s != nil {
		return s
	}
	s := &podServer{items: items, live: make(chan int, 1024), pages: map[string][]byte{},
		adds: map[string][][]byte{}, events: map[string][][]byte{},
		codecs: map[string]codec{protobufType: newCodec(protobufType), jsonType: newCodec(jsonType)}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	servers[key] = s
	return s
}

// setEvents pre-encodes the live events in both content types.
func (s *podServer) setEvents(evs []watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evSrc = evs
	for ct, c := range s.codecs {
		frames := make([][]byte, len(evs))
		for i, e := range evs {
			frames[i] = c.frame(e.Type, e.Object)
		}
		s.events[ct] = frames
	}
}

// clientset returns a clientset speaking contentType to the server, after
// pre-encoding what a sync needs so that encoding is never timed.
func (s *podServer) clientset(b testing.TB, contentType string) *kubernetes.Clientset {
	s.page(contentType, 500, 0)
	s.addFrames(contentType)
	cfg := &rest.Config{Host: s.srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType},
		QPS: -1}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

// listWatch returns a ListerWatcher over a clientset speaking contentType
// (client-go's REST decoding).
func (s *podServer) listWatch(b testing.TB, contentType string) cache.ListerWatcher {
	cs := s.clientset(b, contentType)
	pods := cs.CoreV1().Pods("")
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return pods.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return pods.Watch(ctx, opts)
		},
	}
}

// fastListWatch returns a restsource ListerWatcher over the same server
// and content type: listwatch's own decoder (DecodeWorkers at its default,
// GOMAXPROCS) instead of client-go's REST decoding.
func (s *podServer) fastListWatch(b testing.TB, contentType string) cache.ListerWatcher {
	cs := s.clientset(b, contentType)
	src, err := restsource.New[*corev1.Pod](restsource.Options{Client: cs.CoreV1().RESTClient(),
		Resource: "pods", ContentType: contentType})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

func (s *podServer) contentType(r *http.Request) string {
	if strings.Contains(r.Header.Get("Accept"), "protobuf") {
		return protobufType
	}
	return jsonType
}

func (s *podServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/pods" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	ct := s.contentType(r)
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		s.watch(w, r, ct, q.Get("sendInitialEvents") == "true")
		return
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	from, _ := strconv.Atoi(q.Get("continue"))
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(s.page(ct, limit, from))
}

// page returns the encoded list page of limit items from offset from.
func (s *podServer) page(ct string, limit, from int) []byte {
	if limit <= 0 || limit > len(s.items) {
		limit = len(s.items)
	}
	key := ct + "|" + strconv.Itoa(limit) + "|" + strconv.Itoa(from)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pages[key]; ok {
		return p
	}
	if from == 0 { // encode every page of this size at once
		for off := 0; off < len(s.items); off += limit {
			to := min(off+limit, len(s.items))
			l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: s.items[off:to]}
			if to < len(s.items) {
				l.Continue = strconv.Itoa(to)
				l.RemainingItemCount = ptr.To(int64(len(s.items) - to))
			}
			s.pages[ct+"|"+strconv.Itoa(limit)+"|"+strconv.Itoa(off)] = s.codecs[ct].encode(l)
		}
	}
	return s.pages[key]
}

func (s *podServer) addFrames(ct string) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.adds[ct]; ok {
		return f
	}
	f := make([][]byte, len(s.items))
	for i := range s.items {
		f[i] = s.codecs[ct].frame(watch.Added, &s.items[i])
	}
	s.adds[ct] = f
	return f
}

func (s *podServer) watch(w http.ResponseWriter, r *http.Request, ct string, initial bool) {
	c := s.codecs[ct]
	w.Header().Set("Content-Type", c.watchType)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	if initial {
		for _, f := range s.addFrames(ct) {
			if _, err := w.Write(f); err != nil {
				return
			}
		}
		bm := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1",
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
		_, _ = w.Write(c.frame(watch.Bookmark, bm))
	}
	flusher.Flush()
	s.mu.Lock()
	frames := s.events[ct]
	s.mu.Unlock()
	for {
		select {
		case <-r.Context().Done():
			return
		case i := <-s.live:
			if _, err := w.Write(frames[i]); err != nil {
				return
			}
			if len(s.live) == 0 {
				flusher.Flush()
			}
		}
	}
}
