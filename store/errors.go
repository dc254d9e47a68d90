package store

import (
	"errors"
	"reflect"
)

var (
	// ErrNilObject is returned when a nil object is given where an object is required.
	ErrNilObject = errors.New("listwatch/store: nil object")
	// ErrNoName is returned by NamespacedKey for an object whose metadata has no name.
	ErrNoName = errors.New("listwatch/store: object has no name, so no key")
)

// isNil reports whether obj is a nil interface or a typed nil pointer.
func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}
