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
	// IndexBytes is what the indexes take: each one's map of values, the
	// values' strings and their sets of entries.
	IndexBytes int64
	// Bytes is everything: BytesPerObject times Objects, the allocations
	// shared between objects once, the store's own entries (about 48
	// bytes, a table slot and the key per object) and IndexBytes.
	Bytes int64
}

// Footprint estimates the memory the store's objects take, by walking up
// to sample of them (default 64 when sample <= 0) under the read lock:
// every pointer, slice, map and string reachable from an object, each
// allocation counted at its Go size, rounded up to the allocator's size
// class. An allocation reachable from one sampled object is that
// object's and is scaled up to the whole store; one reachable from two or
// more sampled objects (an interned string or label map, a string of the
// program's binary) is shared and counted once, not scaled: so a cache
// that interns is not counted as if every object had its own copy. Maps
// are counted at their entries' size plus the size of their groups of
// slots. It costs about a microsecond per sampled field; it is meant for
// status pages and scrapes, not for hot paths.
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
	var keys int64
	w := walker{seen: map[uintptr]*allocation{}}
	i := 0
	c.items.all(func(e *entry[T]) bool {
		if i%step == 0 {
			w.object++
			w.walk(reflect.ValueOf(&e.obj).Elem())
			keys += int64(len(e.key))
			fp.Sampled++
		}
		i++
		return fp.Sampled < sample
	})
	own, shared := w.totals()
	fp.BytesPerObject = own / int64(fp.Sampled)
	perEntry := int64(unsafe.Sizeof(entry[T]{})) + 16 + keys/int64(fp.Sampled) // entry, table slot, key
	for _, ix := range c.indexes {
		fp.IndexBytes += ix.bytes()
	}
	fp.Bytes = (fp.BytesPerObject+perEntry)*int64(fp.Objects) + shared + fp.IndexBytes
	return fp
}

// bytes is what the index holds, counted as [Reader.Footprint] counts an
// object: its map of values, each value's string (unless taken from the
// entries' keys) and its postings. It visits every value: O(values).
func (ix *index[T]) bytes() int64 {
	n := mapBytes(len(ix.values), int64(unsafe.Sizeof("")), int64(unsafe.Sizeof((*postings[T])(nil))))
	each := alloc(int64(unsafe.Sizeof(postings[T]{})))
	ptr := int64(unsafe.Sizeof((*entry[T])(nil)))
	for v, p := range ix.values {
		n += each + alloc(int64(cap(p.small))*ptr) + alloc(int64(len(p.large.slots))*ptr)
		if !ix.fromKey {
			n += alloc(int64(len(v)))
		}
	}
	return n
}

// mapBytes is what a map of n entries of the given key and value sizes
// takes. Swiss tables: groups of 8 slots with 8 control bytes, at most
// 7/8 full, a power of two of slots past the first group; plus a header.
func mapBytes(n int, key, value int64) int64 {
	slots := int64(8)
	for l := int64(n); slots*7/8 < l; {
		slots *= 2
	}
	return alloc(48) + alloc(slots/8*(8+8*(key+value)))
}

// sizeOf is the estimated heap size reachable from v, not counting v's own
// inline size (its container counts that).
func sizeOf(v reflect.Value) int64 {
	w := walker{seen: map[uintptr]*allocation{}, object: 1}
	w.walk(v)
	own, shared := w.totals()
	return own + shared
}

// walker adds up the allocations reachable from the objects it walks,
// one object after the other (object numbers them from 1).
type walker struct {
	// seen holds every allocation counted, by address: the same one
	// reached again in the same object (a cycle, a pointer shared within
	// it) is not walked again; reached from another object, it becomes
	// shared.
	seen   map[uintptr]*allocation
	object int
	// boxed adds up the values boxed in interfaces, each its object's.
	boxed int64
}

// allocation is one counted allocation: its size, the last object that
// reached it, and whether more than one did.
type allocation struct {
	size   int64
	last   int
	shared bool
}

// totals returns the bytes of allocations reached from one object only,
// and of those reached from several.
func (w *walker) totals() (own, shared int64) {
	own = w.boxed
	for _, a := range w.seen {
		if a.shared {
			shared += a.size
		} else {
			own += a.size
		}
	}
	return own, shared
}

// visit records the allocation at p of size bytes and reports whether
// what it holds must be walked: not when this object reached it before.
func (w *walker) visit(p uintptr, size int64) bool {
	if a := w.seen[p]; a != nil {
		if a.last == w.object {
			return false
		}
		a.last, a.shared = w.object, true
		return true
	}
	w.seen[p] = &allocation{size: size, last: w.object}
	return true
}

// walk records what v points to.
func (w *walker) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if w.visit(v.Pointer(), alloc(int64(e.Type().Size()))) {
			w.walk(e)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			w.walk(e)
			return
		}
		// A non-pointer value in an interface is boxed in an
		// allocation of its own (reflect shows no address to share by).
		w.boxed += alloc(int64(e.Type().Size()))
		w.walk(e)
	case reflect.String:
		if v.Len() > 0 {
			w.visit(uintptr(unsafe.Pointer(unsafe.StringData(v.String()))), alloc(int64(v.Len())))
		}
	case reflect.Slice:
		if v.IsNil() || !w.visit(v.Pointer(), alloc(int64(v.Cap())*int64(v.Type().Elem().Size()))) {
			return
		}
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			w.walk(v.Field(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		if !w.visit(v.Pointer(), mapBytes(v.Len(), int64(v.Type().Key().Size()), int64(v.Type().Elem().Size()))) {
			return
		}
		it := v.MapRange()
		for it.Next() {
			w.walk(it.Key())
			w.walk(it.Value())
		}
	}
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
