package factory

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/informer"
)

// Snapshots returns an informer.Snapshot of every informer the factory has
// handed out, started or not, sorted by Name (then Resource), with the
// factory's resource and selection filled in: GVR is the resource name
// parsed (ParseResource), and Resource shows it as group/version/resource
// ("v1/pods" in the core group) when it gives a version, else as given.
func (f *Factory) Snapshots() []informer.Snapshot {
	type entry struct {
		key factoryKey
		inf informer.Snapshotter
	}
	all := f.informers.All()
	entries := make([]entry, 0, len(all))
	for key, inf := range all {
		entries = append(entries, entry{key, inf})
	}
	out := make([]informer.Snapshot, 0, len(entries))
	for _, e := range entries {
		s := e.inf.Snapshot()
		s.GVR = ParseResource(e.key.resource)
		s.Resource = e.key.resource
		if s.GVR.Version != "" {
			s.Resource = strings.TrimPrefix(s.GVR.Group+"/"+s.GVR.Version+"/"+s.GVR.Resource, "/")
		}
		s.Namespace, s.LabelSelector, s.FieldSelector = e.key.sel.Namespace, e.key.sel.LabelSelector, e.key.sel.FieldSelector
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// ParseResource turns a Factory resource name into a GroupVersionResource:
// the String() of a GroupVersionResource ("apps/v1, Resource=deployments")
// gives all three parts, "group/version/resource" and "version/resource"
// are split on slashes, and anything else is taken as the bare resource.
func ParseResource(resource string) schema.GroupVersionResource {
	if gv, res, ok := strings.Cut(resource, ", Resource="); ok {
		g, v, found := strings.Cut(gv, "/")
		if !found {
			return schema.GroupVersionResource{Version: g, Resource: res}
		}
		return schema.GroupVersionResource{Group: g, Version: v, Resource: res}
	}
	switch parts := strings.Split(resource, "/"); len(parts) {
	case 2:
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}
	case 3:
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
	}
	return schema.GroupVersionResource{Resource: resource}
}
