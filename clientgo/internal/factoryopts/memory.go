package factoryopts

import "github.com/listwatch/listwatch/restsource"

// MemoryOptions are the restsource memory options (restsource.Options'
// fields of the same names) with which a drop-in factory's informers
// decode what they list and watch (informers.MemoryOptions,
// metadatainformer.MemoryOptions and dynamicinformer.MemoryOptions are
// this type). The zero value turns them all off.
type MemoryOptions struct {
	// StripManagedFields leaves every object's metadata.managedFields out
	// while decoding: cached objects have none, as after client-go's
	// informer with a transform that strips them (controller-runtime's
	// TransformStripManagedFields).
	StripManagedFields bool
	// Interner deduplicates the strings that repeat across the cached
	// objects; nil means none. One Interner may serve several factories.
	Interner *restsource.Interner
	// ShareResourceLists, with an Interner, makes equal ResourceLists
	// (containers' requests and limits) of different objects one map:
	// cached objects' ResourceLists must then never be modified in place.
	ShareResourceLists bool
	// ShareRepeated, with an Interner, makes the parts that repeat across
	// objects (labels, annotations, owner references, a pod's container
	// specs, env, volumes, tolerations, ...) one copy, decoded once
	// (restsource.Options.ShareRepeated); it implies ShareResourceLists.
	// Cached objects are read-only anyway, as with client-go: with it,
	// modifying one in place without DeepCopy changes other objects too.
	ShareRepeated bool
}

// DefaultMemoryOptions are the memory options of a drop-in factory built
// without WithMemoryOptions: managedFields stripped while decoding, an
// Interner of restsource's default size (a new one each call) and the
// parts that repeat shared (ShareRepeated): listwatch's recommended
// options for whole objects.
func DefaultMemoryOptions() MemoryOptions {
	return MemoryOptions{StripManagedFields: true, Interner: restsource.NewInterner(0), ShareResourceLists: true, ShareRepeated: true}
}

// Source sets m on opts, the options of an informer's restsource Source.
func (m MemoryOptions) Source(opts restsource.Options) restsource.Options {
	opts.StripManagedFields = m.StripManagedFields
	opts.Interner = m.Interner
	opts.ShareResourceLists = m.ShareResourceLists
	opts.ShareRepeated = m.ShareRepeated
	return opts
}
