// This file is copied by hack/peer/client-go.sh into the ported tools/cache
// shared-informer tests (the leading underscore keeps it out of listwatch's
// own build). client-go's tests read three facts through the informer's
// unexported fields: how many handlers are registered, whether the informer
// has started, and whether a registration belongs to it. A test outside the
// package cannot, so these helpers read the same fields by reflection, for
// client-go's informer (baseline) and for listwatch's drop-in, under the same
// locks the originals take. When either side renames a field the helper
// panics with the name, instead of quietly answering wrong.

package sharedinformer

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	. "k8s.io/client-go/tools/cache"
)

// field returns v's (possibly unexported) field name, usable like an
// exported one.
func field(v reflect.Value, name string) reflect.Value {
	v = reflect.Indirect(v)
	f := v.FieldByName(name)
	if !f.IsValid() {
		panic(fmt.Sprintf("peer harness: %s has no field %q: the peer's internals moved, update hack/peer/client-go/_introspect_test.go", v.Type(), name))
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// lock locks the mutex (sync.Mutex or sync.RWMutex) in v's field name and
// returns its unlock.
func lock(v reflect.Value, name string) func() {
	switch m := field(v, name).Addr().Interface().(type) {
	case *sync.Mutex:
		m.Lock()
		return m.Unlock
	case *sync.RWMutex:
		m.RLock()
		return m.RUnlock
	default:
		panic(fmt.Sprintf("peer harness: field %q is a %T, not a mutex", name, m))
	}
}

// which tells client-go's informer from listwatch's drop-in.
func which(i SharedInformer) (v reflect.Value, clientGo bool) {
	v = reflect.ValueOf(i)
	switch t := fmt.Sprintf("%T", i); t {
	case "*cache.sharedIndexInformer":
		return v, true
	case "*cache.listwatchInformer":
		return field(v, "inf"), false // *informer.Informer[store.Object]
	default:
		panic("peer harness: unknown informer type " + t)
	}
}

func eventHandlerCount(i SharedInformer) int {
	v, clientGo := which(i)
	if clientGo {
		defer lock(v, "startedLock")()
		return field(field(v, "processor"), "listeners").Len()
	}
	defer lock(v, "mu")()
	return field(v, "handlers").Len()
}

func isStarted(i SharedInformer) bool {
	v, clientGo := which(i)
	if clientGo {
		defer lock(v, "startedLock")()
		return field(v, "started").Bool()
	}
	defer lock(v, "mu")()
	return field(v, "started").Bool()
}

func isRegistered(i SharedInformer, h ResourceEventHandlerRegistration) bool {
	v, clientGo := which(i)
	hv := reflect.ValueOf(h)
	if clientGo {
		p := field(v, "processor")
		defer lock(p, "listenersLock")()
		for _, k := range field(p, "listeners").MapKeys() {
			if k.Type() == hv.Type() && k.Pointer() == hv.Pointer() {
				return true
			}
		}
		return false
	}
	if fmt.Sprintf("%T", h) != "*cache.registration" {
		return false
	}
	reg := field(hv, "reg").Pointer()
	defer lock(v, "mu")()
	hs := field(v, "handlers")
	for j := 0; j < hs.Len(); j++ {
		if hs.Index(j).Pointer() == reg {
			return true
		}
	}
	return false
}
