package restsource

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/randfill"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// The typed JSON decoder is checked against kjson, whose semantics it
// claims: on the objects a cluster writes it must decode them itself
// (else it is no faster), and on anything at all (random objects of many
// kinds, hand-written corner cases, random mutations of them) it must end
// with kjson's result and kjson's error.

// likeKJSON decodes data into a new value with unmarshalTyped and with
// kjson and reports any difference.
func likeKJSON[T any](t *testing.T, data []byte) {
	t.Helper()
	var got, want T
	gotErr := unmarshalTyped(data, &got)
	wantErr := kjson.UnmarshalCaseSensitivePreserveInts(data, &want)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%T from %s: error %v, kjson's %v", got, truncate(data), gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%T from %s:\n got %#v\nwant %#v", got, truncate(data), got, want)
	}
}

// plain decodes data into a new T with the codec alone.
func plain[T any](data []byte) (T, error) {
	var v T
	i := jsonwire.SkipSpace(data, 0)
	d := jsonDecoder{b: data}
	end, err := jsonCodecOf(reflect.TypeFor[T]()).decode(&d, i, reflect.ValueOf(&v).UnsafePointer(), 0)
	if err == nil && jsonwire.SkipSpace(data, end) != len(data) {
		err = errNotPlain
	}
	return v, err
}

func TestTypedJSONDecodesClusterObjectsItself(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "ns"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("-----BEGIN CERTIFICATE-----\n..."), "tls.key": {0, 1, 2, 255}, "empty": {}}}
	data, err := json.Marshal(secret)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := plain[corev1.Secret](data); err != nil || !reflect.DeepEqual(&got, secret) {
		t.Fatalf("secret: the codec refused it (%v) or decoded %v", err, got)
	}
	for i, pod := range corpusPods(50, 1) {
		data, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		got, err := plain[corev1.Pod](data)
		if err != nil {
			t.Fatalf("pod %d: the codec refused it: %v", i, err)
		}
		var want corev1.Pod
		if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pod %d differs from kjson's", i)
		}
	}
}

// filler fills objects of any API type with random values that survive
// JSON (as the apimachinery round-trip fuzzers do).
func filler(seed uint64) *randfill.Filler {
	return randfill.NewWithSeed(int64(seed)).NilChance(0.2).NumElements(0, 3).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1e6), resource.DecimalSI)
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			r.Raw = []byte(fmt.Sprintf(`{"k":%d}`, c.Intn(10)))
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			*f = *metav1.NewFieldsV1(`{"f:a":{}}`)
		},
		func(v *any, c randfill.Continue) {
			*v = map[string]any{"n": int64(c.Intn(10)), "s": c.String(5)}
		},
		func(m *map[string]any, c randfill.Continue) {
			*m = map[string]any{"n": int64(c.Intn(10)), "l": []any{"x", true}}
		},
	)
}

func TestTypedJSONLikeKJSONOnRandomObjects(t *testing.T) {
	for seed := range uint64(40) {
		f := filler(seed)
		randomLikeKJSON[corev1.Pod](t, f)
		randomLikeKJSON[corev1.Node](t, f)
		randomLikeKJSON[corev1.Service](t, f)
		randomLikeKJSON[corev1.Secret](t, f)
		randomLikeKJSON[corev1.ConfigMap](t, f)
		randomLikeKJSON[corev1.Event](t, f)
		randomLikeKJSON[appsv1.Deployment](t, f)
		randomLikeKJSON[metav1.Status](t, f)
		randomLikeKJSON[metav1.PartialObjectMetadata](t, f)
		randomLikeKJSON[corner](t, f)
	}
}

func randomLikeKJSON[T any](t *testing.T, f *randfill.Filler) {
	t.Helper()
	var v T
	f.Fill(&v)
	data, err := json.Marshal(&v)
	if err != nil {
		t.Fatalf("%T: %v", v, err)
	}
	likeKJSON[T](t, data)
	r := rand.New(rand.NewPCG(uint64(len(data)), 7))
	for range 20 {
		likeKJSON[T](t, mutate(r, data))
	}
}

// mutate changes data in one random place: a byte dropped, doubled or
// replaced by one of JSON's own, or a member repeated.
func mutate(r *rand.Rand, data []byte) []byte {
	out := append([]byte(nil), data...)
	i := r.IntN(len(out))
	switch r.IntN(5) {
	case 0:
		return append(out[:i], out[i+1:]...)
	case 1:
		return append(out[:i+1], out[i:]...)
	case 2:
		const js = `{}[],:"\ 0-.e1nul`
		out[i] = js[r.IntN(len(js))]
		return out
	case 3:
		if j := strings.IndexByte(string(out[i:]), ','); j > 0 {
			k := strings.IndexByte(string(out[i+j+1:]), ',')
			if k > 0 {
				member := out[i+j+1 : i+j+1+k]
				return append(append(append([]byte(nil), out[:i+j+1]...), append(append([]byte(nil), member...), ',')...), out[i+j+1:]...)
			}
		}
		return out
	default:
		return append(append(out[:i:i], "null"...), data[i:]...)
	}
}

type cornerInner struct {
	A string `json:"a"`
	N int32  `json:"n"`
}

type cornerEmbedded struct {
	E      string `json:"e"`
	Shadow string `json:"shadow"`
	Tie    string // as cornerEmbedded2's: neither is decoded
	Won    string `json:"Won2"` // tagged: wins over cornerEmbedded2's
}

type cornerEmbedded2 struct {
	Tie  string
	Won2 string
}

type cornerNamed string

type cornerByte uint8

// corner holds a field of every kind the codec treats apart.
type corner struct {
	metav1.TypeMeta `json:",inline"`
	cornerEmbedded
	cornerEmbedded2
	S        string                  `json:"s"`
	B        bool                    `json:"b"`
	I8       int8                    `json:"i8"`
	U16      uint16                  `json:"u16"`
	I64      int64                   `json:"i64"`
	U64      uint64                  `json:"u64"`
	F        float64                 `json:"f"`
	Bytes    []byte                  `json:"bytes"`
	MyBytes  []cornerByte            `json:"mybytes"`
	Any      any                     `json:"any"`
	P        *cornerInner            `json:"p"`
	L        []cornerInner           `json:"l"`
	LP       []*cornerInner          `json:"lp"`
	M        map[string]string       `json:"m"`
	MI       map[string]cornerInner  `json:"mi"`
	MN       map[cornerNamed][]int32 `json:"mn"`
	T        metav1.Time             `json:"t"`
	TP       *metav1.Time            `json:"tp"`
	MT       metav1.MicroTime        `json:"mt"`
	Q        resource.Quantity       `json:"q"`
	IS       intstr.IntOrString      `json:"is"`
	Shadow   int                     `json:"shadow"`
	Named    cornerNamed             `json:"named"`
	Raw      runtime.RawExtension    `json:"raw"`
	Arr      [2]int                  `json:"arr"`
	Untagged string
	Bad      string `json:"b·ad"`
	private  string
}

func TestTypedJSONCorners(t *testing.T) {
	good := `{"kind":"K","apiVersion":"v1","e":"emb","shadow":3,"Tie":"x","Won2":"w","s":"str","b":true,"i8":-128,"u16":65535,
		"i64":-9223372036854775808,"u64":9999999999999999999,"f":1.5e3,"bytes":"aGk=","mybytes":"AAE=","any":{"n":1,"f":1.5},
		"p":{"a":"x","n":7},"l":[{"a":"1"},{"n":2}],"lp":[null,{"a":"z"}],"m":{"k":"v","n":null},"mi":{"x":{"a":"y"}},
		"mn":{"k":[1,2]},"t":"2026-01-02T03:04:05Z","tp":"2026-01-02T03:04:05+02:00","mt":"2026-01-02T03:04:05.123456Z",
		"q":"100m","is":"http","named":"nm","raw":{"x":[1,{"y":null}]},"arr":[1,2],"Untagged":"u",
		"unknown":{"deep":[1,2,{"x":"\u00e9"}]},"private":"p"}`
	if v, err := plain[corner]([]byte(good)); err != nil || v.private != "" {
		t.Fatalf("the codec refused the plain corner object (%v), or set an unexported field (%q)", err, v.private)
	}
	cases := []string{
		good,
		`{}`, `null`, ` {"s":"a"} `, `{"s":"a"} x`, `{"s":"a"`, `{"s":}`, `{"s" "a"}`, `{"s":"a",}`, `{,}`, `[]`, `"s"`, ``, ` `,
		`{"s":null,"b":null,"i8":null,"p":null,"l":null,"m":null,"t":null,"tp":null,"q":null,"is":null,"any":null,"bytes":null}`,
		`{"s":1}`, `{"s":true}`, `{"s":{}}`, `{"b":"true"}`, `{"b":1}`, `{"b":tru}`, `{"b":truex}`, `{"b":nul}`,
		`{"i8":128}`, `{"i8":-129}`, `{"u16":65536}`, `{"u16":-1}`, `{"u16":-0}`, `{"i64":9223372036854775808}`,
		`{"u64":18446744073709551616}`, `{"i64":1.0}`, `{"i64":1e2}`, `{"i64":01}`, `{"i64":-}`, `{"i64":"1"}`, `{"i64":-0}`,
		`{"i64":99999999999999999999}`, `{"i64":12345678901234567890}`, `{"u64":18446744073709551615}`, `{"b·ad":"q"}`, `{"Bad":"q"}`,
		`{"s":"a","s":"b"}`, `{"p":{"a":"x"},"p":{"n":1}}`, `{"l":[{"a":"1"}],"l":[{"n":2},{"n":3}]}`, `{"m":{"a":"1"},"m":{"b":"2"}}`,
		`{"s":"\u00e9\n\"q\""}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\xfe\"}", `{"s":"\x"}`, "{\"s\":\"a\tb\"}", `{"\u0073":"esc"}`,
		"{\"m\":{\"\xff\":\"v\"}}", `{"m":{"a":1}}`, `{"m":[]}`, `{"l":{}}`, `{"l":[1]}`, `{"l":[]}`, `{"lp":[]}`, `{"mi":{}}`,
		`{"t":"yesterday"}`, `{"t":1}`, `{"t":"2026-01-02T03:04:05\u005a"}`, `{"tp":"2026-13-02T03:04:05Z"}`,
		`{"q":"1x"}`, `{"q":1}`, `{"is":1}`, `{"is":1.5}`, `{"is":[]}`, `{"raw":nul}`, `{"raw":[1,}`,
		`{"unknown":[1,}`, `{"unknown":{"a" 1}}`, `{"unknown":01}`, `{"unknown":"\q"}`, `{"unknown":tru}`,
		`{"arr":[1,2,3]}`, `{"f":"x"}`, `{"bytes":"!!"}`, `{"bytes":[1,2]}`, `{"bytes":""}`, `{"bytes":"aGk"}`, `{"bytes":"aG k="}`,
		`{"bytes":"aGk\u003d"}`, `{"bytes":"aGk=","bytes":"aA=="}`, `{"mybytes":"aGk="}`, `{"mybytes":[1,256]}`, `{"any":[1,2.5,"x"]}`,
		`{"Untagged":"x"}`, `{"untagged":"x"}`, `{"S":"case"}`, `{"mn":{"k":[1,"x"]}}`, `{"mn":null}`,
		`{"kind":"Pod","kind":"Node"}`, `{"Tie":"t"}`, `{"Won2":"t"}`, `{"e":1}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		likeKJSON[corner](t, []byte(c))
		likeKJSON[*corner](t, []byte(c))
		likeKJSON[[]corner](t, []byte("["+c+"]"))
		for range 50 {
			likeKJSON[corner](t, mutate(r, []byte(good)))
		}
	}
}

// TestTypedJSONIntoSetValues decodes into values already set, as the
// parts decoder's objects are: kjson merges into them, and the codec must
// end the same.
func TestTypedJSONIntoSetValues(t *testing.T) {
	set := func() corner {
		return corner{S: "old", P: &cornerInner{A: "old"}, L: []cornerInner{{A: "old"}, {N: 9}}, M: map[string]string{"old": "v"},
			MI: map[string]cornerInner{"old": {}}, TP: &metav1.Time{}}
	}
	for _, c := range []string{`{"s":"new","n":1}`, `{"p":{"n":1}}`, `{"l":[{"n":1}]}`, `{"m":{"new":"v"}}`, `{"mi":{"new":{"a":"b"}}}`,
		`{"tp":"2026-01-02T03:04:05Z"}`, `{"p":null,"l":null,"m":null}`, `{"l":[]}`} {
		got, want := set(), set()
		gotErr := unmarshalTyped([]byte(c), &got)
		wantErr := kjson.UnmarshalCaseSensitivePreserveInts([]byte(c), &want)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("into a set value from %s:\n got %#v (%v)\nwant %#v (%v)", c, got, gotErr, want, wantErr)
		}
	}
}

// A self-referring type (a CRD's schema) compiles once, from many
// goroutines at a time.
func TestTypedJSONCompilesConcurrently(t *testing.T) {
	type node struct {
		Name     string          `json:"name"`
		Children []node          `json:"children"`
		Next     *node           `json:"next"`
		Peers    map[string]node `json:"peers"`
	}
	data := []byte(`{"name":"a","children":[{"name":"b","next":{"name":"c"}}],"peers":{"p":{"name":"d"}}}`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { likeKJSON[node](t, data) })
	}
	wg.Wait()
	if _, err := plain[node](data); err != nil {
		t.Fatalf("the codec refused a self-referring type: %v", err)
	}
}

// kjson refuses JSON nested more than 10,000 deep, wherever the depth is:
// in the fields the codec decodes, in a value it hands to kjson, in a
// member it skips.
func TestTypedJSONDepth(t *testing.T) {
	type deep struct {
		Next    *deep  `json:"n"`
		List    []deep `json:"l"`
		Any     any    `json:"a"`
		Unknown any    `json:"-"`
	}
	nest := func(outer int, inner string, innerDepth int) []byte {
		var b strings.Builder
		for range outer {
			b.WriteString(`{"n":`)
		}
		b.WriteString(`{"` + inner + `":`)
		b.WriteString(strings.Repeat("[", innerDepth) + strings.Repeat("]", innerDepth))
		b.WriteString("}")
		b.WriteString(strings.Repeat("}", outer))
		return []byte(b.String())
	}
	for _, inner := range []string{"a", "x", "l"} {
		for _, total := range []int{9999, 10000, 10001, 10002} {
			outer := 5000
			likeKJSON[deep](t, nest(outer, inner, total-outer-1))
		}
	}
	likeKJSON[deep](t, []byte(strings.Repeat(`{"n":`, 10000)+"null"+strings.Repeat("}", 10000)))
	likeKJSON[deep](t, []byte(strings.Repeat(`{"n":`, 9999)+"null"+strings.Repeat("}", 9999)))
}

func FuzzTypedJSON(f *testing.F) {
	f.Add([]byte(`{"s":"a","l":[{"a":"1"}],"m":{"k":"v"},"t":"2026-01-02T03:04:05Z","i64":-1}`))
	f.Add([]byte(`{"kind":"K","p":null,"mi":{"x":{"n":1}},"q":"1Gi","is":8080,"unknown":[{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		likeKJSON[corner](t, data)
	})
}

// FuzzTypedJSONPod mutates cluster-shaped pods, whose members the codec
// decodes itself.
func FuzzTypedJSONPod(f *testing.F) {
	for _, pod := range corpusPods(3, 5) {
		data, err := json.Marshal(pod)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		likeKJSON[corev1.Pod](t, data)
	})
}

// BenchmarkTypedJSON: whole objects decoded by kjson and by
// unmarshalTyped, no memory options: corpus pods, and Secrets holding a
// Helm release (14 KB of base64).
func BenchmarkTypedJSON(b *testing.B) {
	var pods, secrets [][]byte
	for _, pod := range corpusPods(100, 1) {
		d, _ := json.Marshal(pod)
		pods = append(pods, d)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 16 {
		release := make([]byte, 10<<10)
		for j := range release {
			release[j] = byte(r.Uint32())
		}
		d, _ := json.Marshal(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sh.helm.release.v1.app-%d.v1", i)},
			Type: "helm.sh/release.v1", Data: map[string][]byte{"release": release}})
		secrets = append(secrets, d)
	}
	benchTyped[corev1.Pod](b, "pods", pods)
	benchTyped[corev1.Secret](b, "secrets", secrets)
}

func benchTyped[T any](b *testing.B, name string, data [][]byte) {
	for _, bc := range []struct {
		name string
		fn   func([]byte, any) error
	}{{"kjson", kjson.UnmarshalCaseSensitivePreserveInts}, {"codec", unmarshalTyped}} {
		b.Run(name+"/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var v T
				if err := bc.fn(data[i%len(data)], &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
