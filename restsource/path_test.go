package restsource

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestResourcePath: with Options.GroupVersion, the path the metadata and
// dynamic clients build (their makeURLSegments), for the core group and
// others, in a namespace and in all.
func TestResourcePath(t *testing.T) {
	for _, c := range []struct {
		gv        schema.GroupVersion
		namespace string
		want      []string
	}{
		{schema.GroupVersion{}, "ns", nil},
		{schema.GroupVersion{Version: "v1"}, "", []string{"api", "v1", "pods"}},
		{schema.GroupVersion{Version: "v1"}, "ns", []string{"api", "v1", "namespaces", "ns", "pods"}},
		{schema.GroupVersion{Group: "apps", Version: "v1"}, "", []string{"apis", "apps", "v1", "pods"}},
		{schema.GroupVersion{Group: "apps", Version: "v1"}, "ns", []string{"apis", "apps", "v1", "namespaces", "ns", "pods"}},
	} {
		if got := resourcePath(Options{GroupVersion: c.gv, Namespace: c.namespace, Resource: "pods"}); !slices.Equal(got, c.want) {
			t.Errorf("%v in %q: %q, want %q", c.gv, c.namespace, got, c.want)
		}
	}
}
