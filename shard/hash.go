package shard

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Field names the object field whose hash places an object in the hash
// space. The values are the field paths of KEP-5866 shard selectors.
type Field string

const (
	// FieldUID hashes metadata.uid: objects spread evenly over members,
	// independently of their namespace. The default.
	FieldUID Field = "object.metadata.uid"
	// FieldNamespace hashes metadata.namespace: every object of a namespace
	// has the same owner, so a controller that reads across one namespace
	// finds it all in its own cache. Spreads only as well as namespaces do.
	FieldNamespace Field = "object.metadata.namespace"
)

// Valid reports whether f is one of the fields the API server can shard on.
func (f Field) Valid() bool { return f == FieldUID || f == FieldNamespace }

// orDefault is f, or FieldUID when f is empty.
func (f Field) orDefault() Field {
	if f == "" {
		return FieldUID
	}
	return f
}

// Value is the string of obj that f hashes.
func (f Field) Value(obj metav1.Object) string {
	if f.orDefault() == FieldNamespace {
		return obj.GetNamespace()
	}
	return string(obj.GetUID())
}

func (f Field) check() error {
	if !f.orDefault().Valid() {
		return fmt.Errorf("shard: unsupported field %q (want %q or %q)", f, FieldUID, FieldNamespace)
	}
	return nil
}

// FNV-1a 64-bit parameters (the server's k8s.io/apimachinery/pkg/sharding
// uses hash/fnv's New64a; TestHashMatchesServer holds us to it).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Hash is the 64-bit FNV-1a hash of key, the position of an object whose
// field value is key in the hash space: the same number the API server
// computes for shardRange (sharding.HashField renders it in hex). It does
// not allocate.
func Hash(key string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= fnvPrime64
	}
	return h
}

// mix is the splitmix64 finalizer: a bijection of uint64 whose output bits
// each depend on every input bit. Rendezvous weights are built from it.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}
