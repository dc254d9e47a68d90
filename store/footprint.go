package store

import (
	"reflect"
	"unsafe"
)

// Footprint estimates what a store's objects cost in memory, for status
// pages and capacity planning (how many bytes per cached object, and in
// all). It is an estimate, made from a sample, not a measurement of the
// heap: see [Reader.Footprint].
type Footprint struct {
	// Objects is the number of stored objects.
	Objects int
	// Sampled is the number of objects whose size was walked.
	Sampled int
	// BytesPerObject is the mean estimated size of the sampled objects.
	BytesPerObject int64
	// Bytes is BytesPerObject times Objects, plus the store's own entries
	// (about 48 bytes and the key per object, index postings not counted).
	Bytes int64
}

// Footprint estimates the memory the store's objects take, by walking up
// to sample of them (default 64 when sample <= 0) under the read lock:
// every pointer, slice, map and string reachable from an object, each
// allocation counted at its Go size, rounded up to the allocator's size
// class, and once per object. A string or
// slice shared with other objects (an interned label value, say) is
// counted in each object that holds it, so the estimate is high for
// caches that intern; maps are counted at their entries' size plus a
// the size of their groups of slots. It costs about a
// microsecond per sampled field; it is meant for status pages and
// scrapes, not for hot paths.
func (r Reader[T]) Footprint(sample int) Footprint {
	if sample <= 0 {
		sample = 64
	}
	c := r.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	fp := Footprint{Objects: c.items.count}
	if fp.Objects == 0 {
		return fp
	}
	// Every step-th entry in slot order: spread over the table, no
	// randomness, so the same content gives the same estimate.
	step := max(1, fp.Objects/sample)
	var total, keys int64
	i := 0
	c.items.all(func(e *entry[T]) bool {
		if i%step == 0 {
			total += sizeOf(reflect.ValueOf(&e.obj).Elem())
			keys += int64(len(e.key))
			fp.Sampled++
		}
		i++
		return fp.Sampled < sample
	})
	fp.BytesPerObject = total / int64(fp.Sampled)
	perEntry := int64(unsafe.Sizeof(entry[T]{})) + 16 + keys/int64(fp.Sampled) // entry, table slot, key
	fp.Bytes = (fp.BytesPerObject + perEntry) * int64(fp.Objects)
	return fp
}

// sizeOf is the estimated heap size reachable from v, not counting v's own
// inline size (its container counts that).
func sizeOf(v reflect.Value) int64 {
	return walk(v, map[uintptr]bool{})
}

// walk adds up what v points to. seen holds the pointers already counted
// in this object, so cycles and pointers shared within one object are
// counted once.
func walk(v reflect.Value, seen map[uintptr]bool) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		e := v.Elem()
		return alloc(int64(e.Type().Size())) + walk(e, seen)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			return walk(e, seen)
		}
		return alloc(int64(e.Type().Size())) + walk(e, seen)
	case reflect.String:
		return alloc(int64(v.Len()))
	case reflect.Slice:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		n := alloc(int64(v.Cap()) * int64(v.Type().Elem().Size()))
		for i := range v.Len() {
			n += walk(v.Index(i), seen)
		}
		return n
	case reflect.Array:
		var n int64
		for i := range v.Len() {
			n += walk(v.Index(i), seen)
		}
		return n
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += walk(v.Field(i), seen)
		}
		return n
	case reflect.Map:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		kt, vt := v.Type().Key(), v.Type().Elem()
		// Swiss tables: groups of 8 slots with 8 control bytes, at most
		// 7/8 full, a power of two of slots past the first group; plus a
		// header.
		slots := int64(8)
		for l := int64(v.Len()); slots*7/8 < l; {
			slots *= 2
		}
		n := alloc(48) + alloc(slots/8*(8+8*int64(kt.Size()+vt.Size())))
		it := v.MapRange()
		for it.Next() {
			n += walk(it.Key(), seen) + walk(it.Value(), seen)
		}
		return n
	}
	return 0
}

// sizeClasses are the Go allocator's small size classes up to 32 KiB.
var sizeClasses = [...]int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048,
	2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880,
	12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// alloc is what an allocation of n bytes takes: its size class, or whole
// pages above 32 KiB.
func alloc(n int64) int64 {
	if n == 0 {
		return 0
	}
	for _, c := range sizeClasses {
		if n <= c {
			return c
		}
	}
	return (n + 8191) / 8192 * 8192
}

// ObjectBytes estimates the heap one object takes, counted as
// [Reader.Footprint] counts each object it samples: every allocation
// reachable from obj at its allocator size class, once. A string shared
// with other objects is counted here too. It walks the whole object (about
// a microsecond per field): for an object being admitted to a cache, not
// for every read.
func ObjectBytes(obj any) int64 {
	return sizeOf(reflect.ValueOf(&obj).Elem())
}
