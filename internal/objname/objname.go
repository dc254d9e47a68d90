// Package objname is the one home of an object's name in messages and
// scenario transcripts, "namespace/name" or "name" for a cluster-scoped
// object, for the library's packages (the reflector's effects and errors,
// the RetryWatcher's event lines and relist diff). A store's key is
// store.NamespacedKey, which also refuses nil and nameless objects.
package objname

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Of returns "namespace/name", or "name" when the namespace is empty. It
// never fails: an object without a name yields "namespace/" or "".
func Of(o metav1.Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}
