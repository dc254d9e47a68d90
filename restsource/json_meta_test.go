package restsource

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// customJSONPod decodes itself: its metadata must not be cut.
type customJSONPod struct{ corev1.Pod }

func (p *customJSONPod) UnmarshalJSON([]byte) error { return nil }

func TestJSONMetaLayout(t *testing.T) {
	if !jsonMetaLayoutOK(&corev1.Pod{}) || !jsonMetaLayoutOK(&corev1.ConfigMap{}) {
		t.Fatal("the layout of Pod or ConfigMap is not recognized")
	}
	if jsonMetaLayoutOK(&customJSONPod{}) || jsonMetaLayoutOK(&metav1.Status{}) {
		t.Fatal("a type with its own UnmarshalJSON, or without ObjectMeta, is taken for the layout")
	}
}

// jsonMetaVariants returns JSON encodings of p with the interned metadata
// members in unusual spellings, values and places: each is decoded by the
// typed decoder alone as the reference.
func jsonMetaVariants(t *testing.T, p *corev1.Pod) map[string][]byte {
	obj := podJSON(t, p)
	keys, members := jsonMembers(t, obj)
	if keys[0] != "metadata" {
		t.Fatalf("first member is %q", keys[0])
	}
	metaObj := members[0][len(`"metadata":`):]
	_, mmembers := jsonMembers(t, metaObj)
	rest := members[1:]
	with := func(extra ...string) []byte { // the metadata with extra members last
		ms := append([][]byte{}, mmembers...)
		for _, e := range extra {
			ms = append(ms, []byte(e))
		}
		return jsonObject(append([][]byte{append([]byte(`"metadata":`), jsonObject(ms...)...)}, rest...)...)
	}
	replace := func(old, new string) []byte {
		if !bytes.Contains(obj, []byte(old)) {
			t.Fatalf("%q is not in the pod's JSON", old)
		}
		return []byte(strings.Replace(string(obj), old, new, 1))
	}
	return map[string][]byte{
		"canonical":            obj,
		"labelsNull":           replace(`"labels":{`, `"labels":null,"x-labels":{`),
		"labelsEmpty":          with(`"labels":{}`),
		"labelsTwice":          with(`"labels":{"a":"b"}`),
		"labelKeyTwice":        replace(`"labels":{`, `"labels":{"app":"first",`),
		"escapedLabelsKey":     replace(`"labels":`, `"lab\u0065ls":`),
		"escapedLabel":         replace(`"labels":{`, `"labels":{"e\u00e9\n":"v\"\\",`),
		"capitalLabels":        replace(`"labels":`, `"Labels":`),
		"nullLabelValue":       replace(`"labels":{`, `"labels":{"n":null,`),
		"numberLabelValue":     replace(`"labels":{`, `"labels":{"n":1,`),
		"invalidUTF8Label":     replace(`"labels":{`, "\"labels\":{\"bad\":\"\xff\xfe\","),
		"invalidUTF8LabelKey":  replace(`"labels":{`, "\"labels\":{\"\xc3\":\"v\","),
		"namespaceNull":        replace(`"namespace":`, `"namespace":null,"x-namespace":`),
		"namespaceNumber":      replace(`"namespace":`, `"namespace":7,"x-namespace":`),
		"namespaceTwice":       with(`"namespace":"other"`),
		"generateNameEscaped":  with(`"generateName":"g\u0065n-"`),
		"finalizers":           with(`"finalizers":["a","b\u0062",""]`),
		"finalizersEmpty":      with(`"finalizers":[]`),
		"finalizersNull":       with(`"finalizers":null`),
		"finalizerNullElement": with(`"finalizers":["a",null]`),
		"annotationsNotObject": replace(`"annotations":{`, `"annotations":["x"],"x-annotations":{`),
		"metadataTwice":        jsonObject(append([][]byte{[]byte(`"metadata":{"labels":{"z":"z"}}`), members[0]}, rest...)...),
		"metadataLast":         jsonObject(append(append([][]byte{}, rest...), members[0])...),
		"metadataNull":         jsonObject(append([][]byte{[]byte(`"metadata":null`)}, rest...)...),
		"onlyCut":              jsonObject(append([][]byte{[]byte(`"metadata":{"namespace":"ns","labels":{"a":"b"}}`)}, rest...)...),
		"spaces":               replace(`"labels":{`, " \"labels\" :\n { \"s\" : \"t\" , "),
	}
}

// TestJSONInternedMetadataDifferential: with an Interner, JSON decoding
// reads the metadata's repeating strings from the bytes (json_meta.go);
// the object equals the typed decoder's alone, with managedFields
// stripped or not, for watch events' objects and list items, whatever the
// spelling of the metadata.
func TestJSONInternedMetadataDifferential(t *testing.T) {
	in := NewInterner(0)
	for _, opts := range []Options{{Interner: in}, {Interner: in, StripManagedFields: true}} {
		ref, got := decoders(t, opts)
		if !got.jsonSplit {
			t.Fatal("Pod's JSON layout is not recognized")
		}
		for _, p := range corpusPods(10, 7) {
			for name, obj := range jsonMetaVariants(t, p) {
				for _, path := range jsonPaths {
					if !checkStripped(t, "json "+name+" "+path.name, ref, got, path, obj) {
						if _, err := path.decode(got, bytes.Clone(obj)); err == nil {
							t.Fatalf("json %s %s: the reference fails, interning decodes it", name, path.name)
						}
					}
				}
			}
		}
	}
}

// TestJSONMetadataCutInterned: on a plain pod the members are cut (the
// typed decoder never sees them) and the strings are the Interner's (from
// their second sighting on: the first cut only introduces them).
func TestJSONMetadataCutInterned(t *testing.T) {
	in := newPass(NewInterner(0), 0, doneMetaStrings)
	p := corpusPods(1, 3)[0]
	p.Finalizers = []string{"example.com/f"}
	obj := podJSON(t, p)
	if _, _, ok := cutMetadataStrings(bytes.Clone(obj), in); !ok {
		t.Fatal("not cut")
	}
	cut, m, ok := cutMetadataStrings(bytes.Clone(obj), in)
	if !ok {
		t.Fatal("not cut")
	}
	for _, k := range []string{`"namespace"`, `"generateName"`, `"labels"`, `"annotations"`, `"finalizers"`} {
		if bytes.Contains(cut, []byte(k)) {
			t.Fatalf("%s is still in %s", k, cut)
		}
	}
	if !bytes.Contains(cut, []byte(`"name":`)) || !bytes.Contains(cut, []byte(`"spec":`)) {
		t.Fatalf("other members were cut: %s", cut)
	}
	om := &metav1.ObjectMeta{}
	m.apply(om)
	if om.Namespace != p.Namespace || len(om.Labels) != len(p.Labels) || len(om.Finalizers) != 1 {
		t.Fatalf("read %+v", om)
	}
	if s := in.String(p.Namespace); unsafe.StringData(s) != unsafe.StringData(om.Namespace) {
		t.Fatal("the namespace is not the Interner's")
	}
}

// TestSkipString: jsonwire.SkipString, which passes eight bytes at a time, agrees
// with a plain byte-by-byte scan on random strings whose quotes,
// backslashes, control characters and multi-byte runes fall at every
// offset, ending or not.
func TestSkipString(t *testing.T) {
	plain := skipStringBytewise
	alphabet := []byte("ab\"\\\x00\x1f \x7f\xc3\xa9~")
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 20000 {
		b := make([]byte, 1+r.IntN(40))
		b[0] = '"'
		for i := 1; i < len(b); i++ {
			if r.IntN(8) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = 'a' + byte(r.IntN(26))
			}
		}
		wantEnd, wantEsc, wantOK := plain(b, 0)
		end, esc, err := jsonwire.SkipString(b, 0)
		if (err == nil) != wantOK || end != wantEnd || esc != wantEsc {
			t.Fatalf("case %d, %q: SkipString = %d, %v, %v; byte by byte %d, %v, ok %v", n, b, end, esc, err, wantEnd, wantEsc, wantOK)
		}
	}
}

// skipStringBytewise is SkipString as it was, a byte at a time: the
// reference of TestSkipString and BenchmarkSkipString.
func skipStringBytewise(b []byte, i int) (int, bool, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			escaped = true
			i++
		case c < 0x20:
			return 0, false, false
		}
	}
	return 0, false, false
}

// BenchmarkSkipString: the strings of corpus pods' and ConfigMaps' JSON,
// skipped a word or a byte at a time.
func BenchmarkSkipString(b *testing.B) {
	pods, cms := corpusPods(16, 5), make([]*corev1.ConfigMap, 16)
	for i := range cms {
		cms[i] = testConfigMap(i)
	}
	b.Run("pods", func(b *testing.B) { benchSkipString(b, pods) })
	b.Run("configmaps", func(b *testing.B) { benchSkipString(b, cms) })
}

func benchSkipString[T any](b *testing.B, objs []T) {
	var doc []byte
	for _, o := range objs {
		j, err := json.Marshal(o)
		if err != nil {
			b.Fatal(err)
		}
		doc = append(doc, j...)
	}
	var starts []int // of every string
	for i := 0; i < len(doc); i++ {
		if doc[i] == '"' {
			end, _, _ := skipStringBytewise(doc, i)
			starts = append(starts, i)
			i = end - 1
		}
	}
	b.Run("words", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			for _, i := range starts {
				if _, _, err := jsonwire.SkipString(doc, i); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			for _, i := range starts {
				if _, _, ok := skipStringBytewise(doc, i); !ok {
					b.Fatal("not a string")
				}
			}
		}
	})
}
