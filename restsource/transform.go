package restsource

import "k8s.io/apimachinery/pkg/api/meta"

// CompactTransform returns a transform for caches whose objects are
// decoded by someone else (client-go's informers, controller-runtime's own
// cache): a client-go cache.TransformFunc, for SetTransform,
// controller-runtime's cache.Options.DefaultTransform or
// ByObject.Transform. It sets every object's managedFields to nil (as
// controller-runtime's TransformStripManagedFields does) and, with in,
// interns the strings that repeat across the objects with the walkers
// Options.Interner uses after decoding; shareResourceLists (with in) also
// makes equal ResourceLists one map, as Options.ShareResourceLists does,
// so cached objects' ResourceLists must not be modified in place. Values
// that are not objects (a tombstone) pass unchanged.
//
// The objects were decoded in full before the transform sees them: it
// adds CPU rather than saving any, and lowers the peak memory of a sync
// only as far as the list reaches it object by object (a streaming list);
// decoding with a Source and the memory options saves both
// (docs/benchmarks/doors.md, "controller-runtime's cache on listwatch").
func CompactTransform(in *Interner, shareResourceLists bool) func(any) (any, error) {
	return func(obj any) (any, error) {
		if om := objectMetaOf(obj); om != nil {
			om.ManagedFields = nil
		} else if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
			a.SetManagedFields(nil)
		}
		if in != nil {
			var policy passPolicy
			if shareResourceLists {
				policy = sharesLists
			}
			pass := newPass(in, policy, 0)
			pass.object(obj)
			pass.done()
		}
		return obj, nil
	}
}
