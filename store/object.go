package store

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/internal/nilcheck"
)

// Object is the constraint every listwatch stage places on its element type:
// a pointer API object that carries object metadata. *corev1.Pod,
// *unstructured.Unstructured and *metav1.PartialObjectMetadata all satisfy it.
type Object interface {
	runtime.Object
	metav1.Object
}

// KeyFunc computes the store key of an object. It must be deterministic and
// must return an error rather than an empty key when it cannot compute one.
type KeyFunc[T Object] func(obj T) (string, error)

// NamespacedKey is the default KeyFunc: "namespace/name" for namespaced
// objects and "name" for cluster-scoped ones. An object without a name has
// no key and yields ErrNoName.
func NamespacedKey[T Object](obj T) (string, error) {
	if nilcheck.Is(obj) {
		return "", ErrNilObject
	}
	name := obj.GetName()
	if name == "" {
		return "", ErrNoName
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + name, nil
	}
	return name, nil
}

// MetaNamespaceKey keys objects as client-go's cache.MetaNamespaceKeyFunc
// does: as [NamespacedKey], but an object without a name has a key too,
// "namespace/" (or "" if it has no namespace either), where NamespacedKey
// refuses it. Such objects come from fakes, not from an API server:
// client-go's fake clientset does not fill in a name from generateName,
// and client-go's caches key what it creates this way. Two of them in one
// namespace share the key, as in client-go. See [Options.NamelessKeys].
func MetaNamespaceKey[T Object](obj T) (string, error) {
	if nilcheck.Is(obj) {
		return "", ErrNilObject
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName(), nil
	}
	return obj.GetName(), nil
}
