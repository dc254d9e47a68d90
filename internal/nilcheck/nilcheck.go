// Package nilcheck is the one home of "is this object nil?" for the
// library's packages: an object reaches them as a type parameter or an
// interface, and a nil pointer inside an interface is not == nil.
package nilcheck

import "reflect"

// Is reports whether v is a nil interface, or holds a nil pointer, map,
// slice, func, channel or interface, without allocating for pointer
// types. A method call on such a value would panic, so callers refuse it.
func Is[T any](v T) bool {
	a := any(v)
	if a == nil {
		return true
	}
	switch rv := reflect.ValueOf(a); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
