package restsource

import (
	"bufio"
	"bytes"
	"errors"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// listSource returns a Source for pods with opts, that is never asked to
// send a request.
func listSource(t testing.TB, opts Options) *Source[*corev1.Pod, corev1.Pod] {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Client, opts.Resource, opts.Scheme = cs.CoreV1().RESTClient(), "pods", scheme.Scheme
	src, err := New[*corev1.Pod](opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// listBodies returns a pod list of n pods as protobuf and JSON bodies.
func listBodies(t testing.TB, n int) map[string][]byte {
	l := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "77", Continue: "c1"}}
	for _, p := range corpusPods(n, 9) {
		l.Items = append(l.Items, *p)
	}
	out := map[string][]byte{}
	for _, ct := range []string{ContentTypeProtobuf, ContentTypeJSON} {
		info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), ct)
		var buf bytes.Buffer
		if err := info.Serializer.Encode(l, &buf); err != nil {
			t.Fatal(err)
		}
		out[ct] = buf.Bytes()
	}
	return out
}

// streamAndWhole decodes body as it arrives (in small reads) and whole.
func streamAndWhole(src *Source[*corev1.Pod, corev1.Pod], body []byte) (stream, whole runtime.Object, serr, werr error) {
	stream, serr = src.readList(bufio.NewReaderSize(iotest.HalfReader(bytes.NewReader(body)), 16))
	whole, werr = src.decodeList(bytes.Clone(body))
	return
}

// TestListStreamEqualsWhole: a list read as it arrives, in batches, equals
// the list decoded whole, in both encodings, with the memory options too;
// a truncated list is an error.
func TestListStreamEqualsWhole(t *testing.T) {
	bodies := listBodies(t, 600) // several batches
	for _, opts := range []Options{{}, {StripManagedFields: true, Interner: NewInterner(0), ShareRepeated: true}} {
		for ct, body := range bodies {
			if len(body) < 2*listBatchBytes {
				t.Fatalf("%s: %d bytes fit in fewer than two batches", ct, len(body))
			}
			src := listSource(t, opts)
			stream, whole, serr, werr := streamAndWhole(src, body)
			if serr != nil || werr != nil {
				t.Fatalf("%s: stream: %v, whole: %v", ct, serr, werr)
			}
			if !reflect.DeepEqual(stream, whole) {
				t.Fatalf("%s: the streamed list differs:\n%s", ct, cmp.Diff(whole, stream))
			}
			for _, cut := range []int{len(body) / 2, len(bytes.TrimSpace(body)) - 1} {
				if _, err := src.readList(bufio.NewReader(bytes.NewReader(body[:cut]))); err == nil {
					t.Fatalf("%s: a list cut at %d of %d bytes decodes", ct, cut, len(body))
				}
			}
		}
	}
}

// TestListStreamErrors: a Status, a list of another kind, a bad item and trailing garbage fail as the whole-body decoding fails
// (a Status as the same API error).
func TestListStreamErrors(t *testing.T) {
	src := listSource(t, Options{})
	for _, body := range []string{
		`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old"}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","items":[]}`,
		`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":1}}]}`,
		`{"kind":"PodList","apiVersion":"v1","items":[]} x`,
	} {
		_, _, serr, werr := streamAndWhole(src, []byte(body))
		if serr == nil || werr == nil || apierrors.ReasonForError(serr) != apierrors.ReasonForError(werr) {
			t.Errorf("%s:\nstream: %v\nwhole:  %v", body, serr, werr)
		}
	}
	// A typed list without a kind is the Source's list, read either way
	// (TestListTypeMetaLikeClientGo).
	body := `{"apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`
	stream, whole, serr, werr := streamAndWhole(src, []byte(body))
	if serr != nil || werr != nil || !reflect.DeepEqual(stream, whole) {
		t.Errorf("%s:\nstream: %v %v\nwhole:  %v %v", body, stream, serr, whole, werr)
	}
}

// FuzzListStream: whatever the bytes, reading a list as it arrives does
// not panic, and where both succeed it equals decoding the whole body;
// where the whole body decodes, so does the stream, but for encodings no
// server writes (an items member twice, a protobuf group).
func FuzzListStream(f *testing.F) {
	for _, body := range listBodies(f, 3) {
		f.Add(body)
	}
	f.Add([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}}]}`))
	src := listSource(f, Options{StripManagedFields: true, Interner: NewInterner(256), ShareRepeated: true})
	f.Fuzz(func(t *testing.T, body []byte) {
		stream, whole, serr, werr := streamAndWhole(src, body)
		switch {
		case serr == nil && werr == nil:
			if !reflect.DeepEqual(stream, whole) {
				t.Fatalf("the streamed list differs:\n%s", cmp.Diff(whole, stream))
			}
		case werr == nil && !errors.Is(serr, errExotic):
			t.Fatalf("the whole body decodes, the stream fails: %v", serr)
		}
	})
}
