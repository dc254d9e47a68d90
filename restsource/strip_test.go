package restsource

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// decoders returns the reference decoder (no options) and one with opts.
func decoders(t testing.TB, opts Options) (ref, got *objectDecoder[*corev1.Pod]) {
	t.Helper()
	opts.Scheme = scheme.Scheme
	ref, err := newTypedDecoder[*corev1.Pod](Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	got, err = newTypedDecoder[*corev1.Pod](opts)
	if err != nil {
		t.Fatal(err)
	}
	return ref, got
}

// decodePaths decodes data (a copy each time: decoding may rewrite its
// input) through every path of one encoding: a watch event's object and a
// list item. Protobuf data is the pod's message; JSON data the object.
type decodePath struct {
	name   string
	decode func(d *objectDecoder[*corev1.Pod], data []byte) (runtime.Object, error)
}

var protoPaths = []decodePath{
	{"event", func(d *objectDecoder[*corev1.Pod], msg []byte) (runtime.Object, error) {
		return d.protobuf(wrapUnknown(msg), false)
	}},
	{"item", func(d *objectDecoder[*corev1.Pod], msg []byte) (runtime.Object, error) {
		return d.message(bytes.Clone(msg), nil)
	}},
}

var jsonPaths = []decodePath{
	{"event", func(d *objectDecoder[*corev1.Pod], obj []byte) (runtime.Object, error) {
		return d.json(withKind(obj), false)
	}},
	{"item", func(d *objectDecoder[*corev1.Pod], obj []byte) (runtime.Object, error) {
		return d.jsonItem(bytes.Clone(obj))
	}},
}

// wrapUnknown encodes a pod's message as a protobuf object: the magic and
// an Unknown envelope naming v1 Pod.
func wrapUnknown(msg []byte) []byte { return wrapUnknownAs(msg, "v1", "Pod") }

// wrapUnknownAs is wrapUnknown for an object of another kind.
func wrapUnknownAs(msg []byte, apiVersion, kind string) []byte {
	tm := protowire.AppendTag(nil, 1, protowire.BytesType)
	tm = protowire.AppendString(tm, apiVersion)
	tm = protowire.AppendTag(tm, 2, protowire.BytesType)
	tm = protowire.AppendString(tm, kind)
	out := append([]byte(nil), protoMagic...)
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	out = protowire.AppendBytes(out, tm)
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	return protowire.AppendBytes(out, msg)
}

// withKind returns a copy of the JSON object obj with apiVersion and kind
// first, as a watch event's object has them.
func withKind(obj []byte) []byte {
	out := []byte(`{"apiVersion":"v1","kind":"Pod"`)
	rest := bytes.TrimLeft(obj, " \t\r\n")
	if len(rest) > 0 && rest[0] == '{' {
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
	}
	return append(out, rest...)
}

// podMessage is a pod's protobuf message (no magic, no envelope).
func podMessage(t testing.TB, p *corev1.Pod) []byte {
	t.Helper()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// podJSON is a pod as a JSON object without apiVersion and kind.
func podJSON(t testing.TB, p *corev1.Pod) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// protoFields splits a protobuf message into its fields' encodings.
func protoFields(t testing.TB, msg []byte) (nums []protowire.Number, fields [][]byte) {
	t.Helper()
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		m := protowire.ConsumeFieldValue(num, typ, msg[max(n, 0):])
		if n < 0 || m < 0 {
			t.Fatal("malformed message")
		}
		nums, fields = append(nums, num), append(fields, msg[:n+m])
		msg = msg[n+m:]
	}
	return nums, fields
}

// bytesField encodes a length-delimited field.
func bytesField(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
}

// protoVariants returns encodings of p that the generated decoder decodes
// to the same pod, with the metadata and the managedFields in unusual
// places: managedFields first, metadata last, metadata split in two
// fields, an empty managedFields entry.
func protoVariants(t testing.TB, p *corev1.Pod) map[string][]byte {
	msg := podMessage(t, p)
	nums, fields := protoFields(t, msg)
	if nums[0] != 1 {
		t.Fatalf("metadata is field %d", nums[0])
	}
	metaVal, _ := protowire.ConsumeBytes(fields[0][1:])
	mnums, mfields := protoFields(t, metaVal)
	var managed, firstEntry, others []byte
	var half [2][]byte
	for i, f := range mfields {
		if mnums[i] == 17 {
			if firstEntry == nil {
				firstEntry = f
			}
			managed = append(managed, f...)
		} else {
			others = append(others, f...)
			half[i%2] = append(half[i%2], f...)
		}
	}
	rest := bytes.Join(fields[1:], nil)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	return map[string][]byte{
		"canonical":          msg,
		"managedFieldsFirst": cat(bytesField(1, cat(managed, others)), rest),
		"metadataLast":       cat(rest, fields[0]),
		"metadataSplit":      cat(bytesField(1, cat(half[0], firstEntry)), rest, bytesField(1, half[1]), bytesField(1, managed)),
		"emptyEntry":         cat(bytesField(1, cat(others, bytesField(17, nil))), rest),
		"noManagedFields":    cat(bytesField(1, others), rest),
		"unknownFields":      cat(bytesField(1, cat(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7), metaVal)), rest, bytesField(1000, []byte("x"))),
	}
}

// jsonMembers splits a JSON object into its members' encodings.
func jsonMembers(t testing.TB, obj []byte) (keys []string, members [][]byte) {
	t.Helper()
	err := jsonwire.EachMember(obj, func(key []byte, keyStart, _, valEnd int) error {
		keys, members = append(keys, string(key)), append(members, obj[keyStart:valEnd])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, members
}

func jsonObject(members ...[]byte) []byte {
	return append(append([]byte("{"), bytes.Join(members, []byte(","))...), '}')
}

// jsonVariants returns encodings of p that the typed decoder decodes to
// the same pod, with the metadata and the managedFields in unusual places
// and spellings.
func jsonVariants(t testing.TB, p *corev1.Pod) map[string][]byte {
	obj := podJSON(t, p)
	keys, members := jsonMembers(t, obj)
	if keys[0] != "metadata" {
		t.Fatalf("first member is %q", keys[0])
	}
	metaObj := members[0][len(`"metadata":`):]
	mkeys, mmembers := jsonMembers(t, metaObj)
	var managed []byte
	var others [][]byte
	for i, m := range mmembers {
		if mkeys[i] == "managedFields" {
			managed = m
		} else {
			others = append(others, m)
		}
	}
	if managed == nil {
		t.Fatal("no managedFields")
	}
	meta := func(ms ...[]byte) []byte { return append([]byte(`"metadata":`), jsonObject(ms...)...) }
	var indented bytes.Buffer
	if err := json.Indent(&indented, obj, "", "  "); err != nil {
		t.Fatal(err)
	}
	rest := members[1:]
	return map[string][]byte{
		"canonical":          obj,
		"indented":           indented.Bytes(),
		"managedFieldsFirst": jsonObject(append([][]byte{meta(append([][]byte{managed}, others...)...)}, rest...)...),
		"managedFieldsOnly":  jsonObject(append([][]byte{meta(others...), meta(managed)}, rest...)...),
		"metadataLast":       jsonObject(append(rest, meta(append(others, managed)...))...),
		"twice":              jsonObject(append([][]byte{meta(managed), meta(append(others, managed)...)}, rest...)...),
		"escapedKey":         jsonObject(append([][]byte{meta(append(others, []byte(strings.Replace(string(managed), `"managedFields"`, `"managed\u0046ields"`, 1)))...)}, rest...)...),
		"escapedMetadata":    jsonObject(append(rest, []byte(strings.Replace(string(meta(append(others, managed)...)), `"metadata"`, `"met\u0061data"`, 1)))...),
		"null":               jsonObject(append([][]byte{meta(append(others, []byte(`"managedFields":null`))...)}, rest...)...),
		"spaces":             jsonObject(append([][]byte{meta(append(others, []byte(" \"managedFields\" :\n "+string(managed[len(`"managedFields":`):])+" "))...)}, rest...)...),
		"noManagedFields":    jsonObject(append([][]byte{meta(others...)}, rest...)...),
	}
}

// checkStripped decodes data with the reference decoder and with ref's
// twin got, through path, and requires got's result to be the
// reference's with ManagedFields set to nil. It returns false if the
// reference does not decode data.
func checkStripped(t *testing.T, what string, ref, got *objectDecoder[*corev1.Pod], path decodePath, data []byte) bool {
	t.Helper()
	want, err := path.decode(ref, bytes.Clone(data))
	if err != nil {
		return false
	}
	if got.strip {
		want.(*corev1.Pod).ManagedFields = nil
	}
	obj, err := path.decode(got, bytes.Clone(data))
	if err != nil {
		t.Fatalf("%s: the reference decodes it, stripping fails: %v", what, err)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("%s: stripping differs from full decode then strip (-want +got):\n%s", what, cmp.Diff(want, obj))
	}
	return true
}

// TestStripManagedFieldsDifferential: on the corpus and on encodings with
// the metadata in unusual places, decoding with StripManagedFields equals
// decoding in full and then setting ManagedFields to nil, in protobuf and
// JSON, for watch events' objects and list items; with an Interner too
// (which decodes part of the metadata itself), with an Interner alone, and
// with ShareRepeated (which decodes the pod in parts).
func TestStripManagedFieldsDifferential(t *testing.T) {
	for _, opts := range []Options{{StripManagedFields: true}, {StripManagedFields: true, Interner: NewInterner(0)}, {Interner: NewInterner(64)},
		{StripManagedFields: true, Interner: NewInterner(0), ShareRepeated: true}, {Interner: NewInterner(64), ShareRepeated: true}} {
		ref, got := decoders(t, opts)
		if !got.split {
			t.Fatal("Pod's protobuf layout is not recognized: metadata would not be split")
		}
		for i, p := range corpusPods(40, 1) {
			if n := len(p.ManagedFields); n < 3 || n > 6 {
				t.Fatalf("corpus pod %d has %d managedFields entries", i, n)
			}
			for name, msg := range protoVariants(t, p) {
				for _, path := range protoPaths {
					if !checkStripped(t, "protobuf "+name+" "+path.name, ref, got, path, msg) {
						t.Fatalf("protobuf %s %s: the reference does not decode it", name, path.name)
					}
				}
			}
			for name, obj := range jsonVariants(t, p) {
				for _, path := range jsonPaths {
					if !checkStripped(t, "json "+name+" "+path.name, ref, got, path, obj) {
						t.Fatalf("json %s %s: the reference does not decode it", name, path.name)
					}
				}
			}
		}
	}
}

// TestInternedLabelEntryQuirk: the generated decoder lets a label's value
// run past its map entry into the rest of the metadata; decoding the
// metadata with an Interner reads such bytes the same.
func TestInternedLabelEntryQuirk(t *testing.T) {
	ref, got := decoders(t, Options{StripManagedFields: true, Interner: NewInterner(0)})
	entry := []byte{0x0a, 0x01, 'k', 0x12, 0x03}                                      // key "k", value of 3 bytes: past the entry
	meta := append(append([]byte{0x5a, byte(len(entry))}, entry...), 0x1a, 0x01, 'n') // labels, namespace "n"
	msg := bytesField(1, meta)
	full, err := ref.message(msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if full.Labels["k"] != "\x1a\x01n" || full.Namespace != "n" {
		t.Fatalf("the generated decoder reads %q and %q: the quirk is gone", full.Labels, full.Namespace)
	}
	for _, path := range protoPaths {
		checkStripped(t, "label entry quirk "+path.name, ref, got, path, msg)
	}
}

// TestStripManagedFieldsNeverDecodes: the skipped managedFields are not
// even looked at: garbage in their place does not fail the decoding.
func TestStripManagedFieldsNeverDecodes(t *testing.T) {
	ref, got := decoders(t, Options{StripManagedFields: true})
	p := corpusPods(1, 2)[0]
	p.ManagedFields = nil
	msg := podMessage(t, p)
	want, err := ref.message(msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, fields := protoFields(t, msg)
	meta, _ := protowire.ConsumeBytes(fields[0][1:])
	garbage := bytesField(17, []byte{0xff, 0xff, 0xff}) // a truncated varint inside
	bad := bytes.Join([][]byte{bytesField(1, append(bytes.Clone(meta), garbage...)), bytes.Join(fields[1:], nil)}, nil)
	if err := new(corev1.Pod).Unmarshal(bad); err == nil {
		t.Fatal("the generated decoder accepts the garbage")
	}
	obj, err := got.message(bad, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("decoded pod differs:\n%s", cmp.Diff(want, obj))
	}
	js := bytes.Replace(podJSON(t, p), []byte(`"metadata":{`), []byte(`"metadata":{"managedFields":[{"manager":17,"x":[1 2]}],`), 1)
	if want, err = ref.jsonItem(podJSON(t, p)); err != nil {
		t.Fatal(err)
	}
	if obj, err = got.jsonItem(js); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("decoded pod differs:\n%s", cmp.Diff(want, obj))
	}
}

// TestStripManagedFieldsNeedsObjectMeta: the option is refused for a type
// without ObjectMeta.
func TestStripManagedFieldsNeedsObjectMeta(t *testing.T) {
	_, err := newTypedDecoder[*metav1.Status](Options{Scheme: scheme.Scheme, StripManagedFields: true})
	if err == nil || !strings.Contains(err.Error(), "ObjectMeta") {
		t.Fatalf("err = %v, want a refusal naming ObjectMeta", err)
	}
}

// FuzzStripManagedFields: whatever the bytes, decoding with
// StripManagedFields (and an Interner, which decodes part of the metadata
// itself, and ShareRepeated, which decodes the pod in parts, each part
// once for every pod encoding it alike) does not panic, and when the
// reference decoder decodes them, the result is the reference's with
// ManagedFields nil.
// isJSON selects the encoding: a pod's protobuf message or JSON object.
func FuzzStripManagedFields(f *testing.F) {
	for _, p := range corpusPods(3, 3) {
		for _, msg := range protoVariants(f, p) {
			f.Add(msg, false)
		}
		for _, obj := range jsonVariants(f, p) {
			f.Add(obj, true)
		}
	}
	ref, got := decoders(f, Options{StripManagedFields: true, Interner: NewInterner(256), ShareRepeated: true})
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		paths := protoPaths
		if isJSON {
			paths = jsonPaths
		}
		for _, path := range paths {
			if !checkStripped(t, path.name, ref, got, path, data) {
				_, _ = path.decode(got, bytes.Clone(data)) // must not panic
			}
		}
	})
}
