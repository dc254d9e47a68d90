package fake

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVR is short for schema.GroupVersionResource.
type GVR = schema.GroupVersionResource

// isNil reports whether v is nil or a typed nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
