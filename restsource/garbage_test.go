package restsource_test

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestWatchBadInput: after the good events before it, a bad frame ends
// the watch with one ERROR event (a 500 Status naming the problem, as
// client-go reports decode errors) and a truncated stream closes it
// quietly; nothing panics, no event is dropped or reordered.
func TestWatchBadInput(t *testing.T) {
	type tc struct {
		name    string
		ct      string
		tail    func(t testing.TB, e enc) []byte
		errText string // "" means: closed without an ERROR event
	}
	pbFrame := func(b []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) }
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}
	cases := []tc{
		{"pb truncated header", pb, func(t testing.TB, e enc) []byte { return []byte{0, 0} }, ""},
		{"pb truncated frame", pb, func(t testing.TB, e enc) []byte { f := e.frame(t, watch.Added, testPod(9)); return f[:len(f)-3] }, ""},
		{"pb frame too large", pb, func(t testing.TB, e enc) []byte { return []byte{0x7f, 0, 0, 0, 1} }, "longer than maximum allowed size"},
		{"pb garbage frame", pb, func(t testing.TB, e enc) []byte { return pbFrame([]byte{0xff, 0xff, 0xff}) }, "malformed protobuf watch event"},
		{"pb unknown event type", pb, func(t testing.TB, e enc) []byte { return e.frame(t, "SNAPSHOT", testPod(9)) }, `invalid watch event type: \"SNAPSHOT\"`},
		{"pb empty event type", pb, func(t testing.TB, e enc) []byte { return e.frame(t, "", testPod(9)) }, "invalid watch event type"},
		{"pb wrong kind", pb, func(t testing.TB, e enc) []byte { return e.frame(t, watch.Added, cm) }, "expected v1 Pod, got v1 ConfigMap"},
		{"pb no magic", pb, func(t testing.TB, e enc) []byte { return e.rawFrame(t, "ADDED", []byte("{}")) }, "not a protobuf-encoded object"},
		{"pb no object", pb, func(t testing.TB, e enc) []byte { return e.rawFrame(t, "ADDED", nil) }, "not a protobuf-encoded object"},
		{"pb pod in an ERROR", pb, func(t testing.TB, e enc) []byte { return e.frame(t, watch.Error, testPod(9)) }, "ERROR event carries v1 Pod"},
		{"pb corrupt pod", pb, func(t testing.TB, e enc) []byte {
			raw := e.object(t, testPod(9))
			return e.rawFrame(t, "ADDED", raw[:len(raw)-5])
		}, "malformed protobuf envelope"},
		{"json truncated", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":"ADDED","object":{"kind":"Pod"`) }, ""},
		{"json not an object", js, func(t testing.TB, e enc) []byte { return []byte("[1,2]\n") }, "looking for the beginning of a JSON watch event"},
		{"json garbage", js, func(t testing.TB, e enc) []byte { return []byte("\x00\x01") }, "invalid character"},
		{"json unknown event type", js, func(t testing.TB, e enc) []byte { return e.frame(t, "SNAPSHOT", testPod(9)) }, `invalid watch event type: \"SNAPSHOT\"`},
		{"json type not a string", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":1,"object":{}}`) }, "expected a JSON string"},
		{"json wrong kind", js, func(t testing.TB, e enc) []byte { return e.frame(t, watch.Modified, cm) }, "expected v1 Pod, got v1 ConfigMap"},
		{"json no kind", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":"ADDED","object":{"apiVersion":"v1"}}`) }, "'Kind' is missing"},
		{"json no apiVersion", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":"ADDED","object":{"kind":"Pod"}}`) }, "'apiVersion' is missing"},
		{"json no object", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":"ADDED"}`) }, "unexpected end of JSON input"},
		{"json null object", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":"ADDED","object":null}`) }, "'Kind' is missing"},
		{"json bad field type", js, func(t testing.TB, e enc) []byte {
			return []byte(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","spec":{"containers":7}}}`)
		}, "cannot unmarshal number"},
		{"json mismatched brackets", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":"ADDED","object":{"a":[}]}}`) }, "invalid character"},
		{"json trailing garbage in frame", js, func(t testing.TB, e enc) []byte { return []byte(`{"type":"ADDED" "object":{}}`) }, "invalid character"},
		{"json pod in an ERROR", js, func(t testing.TB, e enc) []byte { return e.frame(t, watch.Error, testPod(9)) }, "ERROR event: decoding Status"},
		{"json configmap in an ERROR", js, func(t testing.TB, e enc) []byte { return e.frame(t, watch.Error, cm) }, "ERROR event carries v1 ConfigMap"},
	}
	for _, c := range cases {
		for _, workers := range []int{1, 3} {
			t.Run(c.name, func(t *testing.T) {
				e := newEnc(c.ct)
				srv := newServer(t)
				var body []byte
				for i := range 5 {
					body = append(body, e.frame(t, watch.Added, testPod(i))...)
				}
				srv.watch[c.ct] = append(body, c.tail(t, e)...)
				w, err := srv.source(t, c.ct, workers).WatchWithContext(t.Context(), metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				evs := drain(t, w)
				for i := range 5 {
					if i >= len(evs) || evs[i].Type != watch.Added || evs[i].Object.(*corev1.Pod).Name != testPod(i).Name {
						t.Fatalf("event %d of %d: not pod-%d: %v", i, len(evs), i, describe(evs))
					}
				}
				if c.errText == "" {
					if len(evs) != 5 {
						t.Fatalf("got %d events after the good ones, want none: %v", len(evs)-5, describe(evs[5:]))
					}
					return
				}
				if len(evs) != 6 || evs[5].Type != watch.Error {
					t.Fatalf("want the 5 events then one ERROR, got %d: %v", len(evs), describe(evs))
				}
				st := evs[5].Object.(*metav1.Status)
				if st.Code != http.StatusInternalServerError || st.Reason != metav1.StatusReasonInternalError ||
					st.Details == nil || st.Details.Causes[len(st.Details.Causes)-1].Type != "ClientWatchDecoding" {
					t.Errorf("status %+v is not client-go's decoding error", st)
				}
				if !strings.Contains(st.Message, c.errText) {
					t.Errorf("message %q does not contain %q", st.Message, c.errText)
				}
			})
		}
	}
}

// FuzzWatchFrames: any bytes after a valid frame give the valid event
// first, then events, an ERROR, or the end: never a panic or a hang.
func FuzzWatchFrames(f *testing.F) {
	for _, ct := range contentTypes {
		e := newEnc(ct)
		f.Add(ct == js, e.frame(f, watch.Added, testPod(1)))
		f.Add(ct == js, e.frame(f, watch.Error, &metav1.Status{Code: 410}))
	}
	f.Add(true, []byte(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"\u00e9"}}}`))
	f.Add(false, []byte{0, 0, 0, 2, 10, 0})
	f.Fuzz(func(t *testing.T, isJSON bool, tail []byte) {
		ct := pb
		if isJSON {
			ct = js
		}
		e := newEnc(ct)
		srv := newServer(t)
		srv.watch[ct] = append(e.frame(t, watch.Added, testPod(0)), tail...)
		for _, workers := range []int{1, 2} {
			w, err := srv.source(t, ct, workers).WatchWithContext(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			evs := drain(t, w)
			w.Stop()
			if len(evs) == 0 || evs[0].Object.(*corev1.Pod).Name != "pod-0" {
				t.Fatalf("the valid first event was not delivered first: %v", evs)
			}
			for i, ev := range evs[:len(evs)-1] {
				if ev.Object == nil {
					t.Fatalf("event %d has no object", i)
				}
			}
		}
	})
}

// describe summarises events for failure messages.
func describe(evs []watch.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch o := ev.Object.(type) {
		case *corev1.Pod:
			out[i] = string(ev.Type) + " " + o.Name
		case *metav1.Status:
			out[i] = string(ev.Type) + " " + o.Message
		default:
			out[i] = fmt.Sprintf("%s %T", ev.Type, o)
		}
	}
	return out
}
