package shard

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/sharding"
)

func TestHashVectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325}, // FNV-1a 64 offset basis
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	} {
		if got := Hash(tc.in); got != tc.want {
			t.Errorf("Hash(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

// TestHashMatchesServer holds Hash to the server's hash, byte for byte.
func TestHashMatchesServer(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		key := randomUID(r)
		if i%3 == 0 {
			key = "ns-" + strconv.Itoa(i)
		}
		if got, want := fmt.Sprintf("%016x", Hash(key)), sharding.HashField(key); got != want {
			t.Fatalf("Hash(%q) = %s, server %s", key, got, want)
		}
	}
}

func TestHashDoesNotAllocate(t *testing.T) {
	key := "0b5c1f7e-6a3d-4f5e-9c2b-8d7a6e5f4c3b"
	if n := testing.AllocsPerRun(100, func() { _ = Hash(key) }); n != 0 {
		t.Errorf("Hash allocates %v times", n)
	}
}

func TestFieldValue(t *testing.T) {
	obj := testObject("team-a", "uid-1")
	for _, tc := range []struct {
		f    Field
		want string
	}{{"", "uid-1"}, {FieldUID, "uid-1"}, {FieldNamespace, "team-a"}} {
		if got := tc.f.Value(obj); got != tc.want {
			t.Errorf("Field(%q).Value = %q, want %q", tc.f, got, tc.want)
		}
	}
	if err := Field("metadata.name").check(); err == nil {
		t.Error("metadata.name accepted")
	}
}

// randomUID is a version-4 UUID string from r, as the API server assigns.
func randomUID(r *rand.Rand) string {
	var b [36]byte
	return string(appendUID(b[:0], r))
}

// appendUID appends a random version-4 UUID string to dst.
func appendUID(dst []byte, r *rand.Rand) []byte {
	const hex = "0123456789abcdef"
	hi, lo := r.Uint64(), r.Uint64()
	hi = hi&^(0xf<<12) | 4<<12
	lo = lo&^(0x3<<62) | 0x2<<62
	for i := range 16 {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		var b byte
		if i < 8 {
			b = byte(hi >> (56 - 8*i))
		} else {
			b = byte(lo >> (56 - 8*(i-8)))
		}
		dst = append(dst, hex[b>>4], hex[b&0xf])
	}
	return dst
}
