package wire

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func message() []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "abc")
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	b = protowire.AppendTag(b, 3, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 7)
	b = protowire.AppendTag(b, 4, protowire.StartGroupType)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 4, protowire.EndGroupType)
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	return protowire.AppendString(b, "")
}

// FuzzFields: New reads the fields protowire reads, spans and values, and
// fails where protowire fails; a Prefix of a message reads it as New does
// but for a length-delimited value cut short.
func FuzzFields(f *testing.F) {
	f.Add(message())
	f.Add(message()[:5])
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, msg []byte) {
		it, i := New(msg), 0
		for it.Next() {
			num, typ, n := protowire.ConsumeField(msg[i:])
			if n < 0 || it.Num != num || it.Type != typ || it.Start() != i || it.End() != i+n {
				t.Fatalf("at %d: got %d %d [%d:%d], protowire %d %d %d", i, it.Num, it.Type, it.Start(), it.End(), num, typ, n)
			}
			if typ == protowire.BytesType {
				_, _, tn := protowire.ConsumeTag(msg[i:])
				v, _ := protowire.ConsumeBytes(msg[i+tn:])
				if !bytes.Equal(v, it.Bytes()) || it.Len() != len(v) || !bytes.HasPrefix(it.Rest(), v) {
					t.Fatalf("at %d: value %q, protowire %q", i, it.Bytes(), v)
				}
			}
			i += n
		}
		if _, _, n := protowire.ConsumeField(msg[i:]); (it.Err() != nil) != (i < len(msg) && n < 0) {
			t.Fatalf("at %d: error %v, protowire %d", i, it.Err(), n)
		}
		p := Prefix(msg)
		for p.Next() {
			if p.End() == len(msg) && p.Type == protowire.BytesType {
				break // perhaps cut short
			}
		}
		if it.Err() == nil && p.Err() != nil {
			t.Fatalf("Prefix fails where New does not: %v", p.Err())
		}
	})
}

// TestPrefix: a length-delimited value cut short is what there is of it.
func TestPrefix(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, 1000)
	b = append(b, "xyz"...)
	p := Prefix(b)
	if !p.Next() || p.Num != 2 || p.Len() != 1000 || string(p.Bytes()) != "xyz" || p.HeadLen() != 3 || p.End() != len(b) {
		t.Fatalf("Prefix: %d %d %q %d, %v", p.Num, p.Len(), p.Bytes(), p.HeadLen(), p.Err())
	}
	if n := New(b); n.Next() || n.Err() == nil {
		t.Fatal("New reads a value cut short")
	}
}

// TestGogo: the generated decoders' leniency: a 10-byte varint whose last
// byte has more than one bit, a group skipped by depth whatever its end's
// number.
func TestGogo(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = append(b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f)
	b = protowire.AppendTag(b, 2, protowire.StartGroupType)
	b = protowire.AppendTag(b, 3, protowire.EndGroupType)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, "v")
	if Valid(b) {
		t.Fatal("protowire's rules accept it")
	}
	var nums []protowire.Number
	f := Gogo(b)
	for f.Next() {
		nums = append(nums, f.Num)
	}
	if f.Err() != nil || len(nums) != 3 || string(f.Bytes()) != "v" {
		t.Fatalf("Gogo: %v %v", nums, f.Err())
	}
}

// TestMapEntry: key and value read as length-delimited whatever their
// wire types, the value running past the entry's end.
func TestMapEntry(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "k")
	b = protowire.AppendTag(b, 2, protowire.VarintType) // read as bytes
	b = protowire.AppendString(b, "value")
	var got []string
	err := MapEntry(b, 4, func(num protowire.Number, raw []byte) error {
		got = append(got, string(raw))
		return nil
	})
	if err != nil || len(got) != 2 || got[0] != "k" || got[1] != "value" {
		t.Fatalf("MapEntry: %q %v", got, err)
	}
}
