// Package listobj is the one home of reading a list response: its items
// and its resource version, as the RetryWatcher's relist and the drop-in
// UntilWithSync need them; and of building one, as the sources that serve
// a relist from an informer's cache (shard.Source, scope.Source) do.
package listobj

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Items extracts the items and the resource version of a list object.
func Items(list runtime.Object) ([]runtime.Object, string, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", fmt.Errorf("list returned a %T without list metadata: %w", list, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, "", fmt.Errorf("cannot extract items from %T: %w", list, err)
	}
	return items, lm.GetResourceVersion(), nil
}

// Empty returns an empty list of list's type (its kind and API version
// kept), to build lists in with Build; nil when list's type cannot be
// made anew.
func Empty(list runtime.Object) runtime.Object {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		t := &unstructured.UnstructuredList{Object: map[string]any{}}
		t.SetAPIVersion(u.GetAPIVersion())
		t.SetKind(u.GetKind())
		return t
	}
	if t := reflect.TypeOf(list); t != nil && t.Kind() == reflect.Pointer {
		if o, ok := reflect.New(t.Elem()).Interface().(runtime.Object); ok {
			o.GetObjectKind().SetGroupVersionKind(list.GetObjectKind().GroupVersionKind())
			return o
		}
	}
	return nil
}

// Build returns a copy of template (an Empty list) holding items at
// resource version rv.
func Build(template runtime.Object, items []runtime.Object, rv string) (runtime.Object, error) {
	list := template.DeepCopyObject()
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	la.SetResourceVersion(rv)
	return list, nil
}

// Objects returns items as runtime.Objects (the same objects, not copies).
func Objects[T runtime.Object](items []T) []runtime.Object {
	out := make([]runtime.Object, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}
