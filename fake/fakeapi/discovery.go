package fakeapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// verbs are the verbs discovery lists for every served resource: those
// this package serves.
var verbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}

// statusVerbs are those of a status subresource.
var statusVerbs = metav1.Verbs{"get", "patch", "update"}

// servedVersion is the version /version reports: the kube-apiserver
// release whose semantics package fake follows.
var servedVersion = version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.0-fakeapi", Platform: "fake/fakeapi"}

// discovery answers GET /version, /api, /apis, /api/v1, /apis/GROUP and
// /apis/GROUP/VERSION, in the unaggregated form (application/json), which
// client-go's discovery client falls back to; it reports whether the path
// was one of them.
func (h *handler) discovery(w http.ResponseWriter, r *http.Request) bool {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var body any
	switch {
	case len(parts) == 1 && parts[0] == "version":
		body = servedVersion
	case len(parts) == 1 && parts[0] == "api":
		body = &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
			Versions: h.versions(""),
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
				{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
			},
		}
	case len(parts) == 1 && parts[0] == "apis":
		list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
		for _, g := range h.groups() {
			list.Groups = append(list.Groups, h.group(g))
		}
		body = list
	case len(parts) == 2 && parts[0] == "apis":
		if len(h.versions(parts[1])) == 0 {
			return false
		}
		g := h.group(parts[1])
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		body = &g
	case len(parts) == 2 && parts[0] == "api":
		body = h.resourceList(schema.GroupVersion{Version: parts[1]})
	case len(parts) == 3 && parts[0] == "apis":
		body = h.resourceList(schema.GroupVersion{Group: parts[1], Version: parts[2]})
	default:
		return false
	}
	if l, ok := body.(*metav1.APIResourceList); ok && l == nil {
		return false
	}
	if r.Method != http.MethodGet {
		h.writeError(w, r, notFound(r.URL.Path))
		return true
	}
	data, err := json.Marshal(body)
	h.writeEncoded(w, r, http.StatusOK, "application/json", func() ([]byte, error) { return data, err })
	return true
}

// groups are the named groups served, in the order of their first resource.
func (h *handler) groups() []string {
	var out []string
	for _, r := range h.resources {
		if g := r.GVR.Group; g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// versions are the versions of group served, in the order of their first
// resource; the first is the preferred one.
func (h *handler) versions(group string) []string {
	var out []string
	for _, r := range h.resources {
		if r.GVR.Group == group && !slices.Contains(out, r.GVR.Version) {
			out = append(out, r.GVR.Version)
		}
	}
	return out
}

func (h *handler) group(name string) metav1.APIGroup {
	g := metav1.APIGroup{Name: name}
	for _, v := range h.versions(name) {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
	}
	g.PreferredVersion = g.Versions[0]
	return g
}

// resourceList is the discovery document of gv, or nil if nothing of it
// is served.
func (h *handler) resourceList(gv schema.GroupVersion) *metav1.APIResourceList {
	var out *metav1.APIResourceList
	for _, r := range h.resources {
		if r.GVR.GroupVersion() != gv {
			continue
		}
		if out == nil {
			out = &metav1.APIResourceList{
				TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: gv.String(),
			}
		}
		out.APIResources = append(out.APIResources, metav1.APIResource{
			Name:         r.GVR.Resource,
			SingularName: strings.ToLower(r.Kind),
			Namespaced:   r.Namespaced,
			Kind:         r.Kind,
			Verbs:        verbs,
		})
		if h.status[r.GVR] {
			out.APIResources = append(out.APIResources, metav1.APIResource{
				Name:       r.GVR.Resource + "/status",
				Namespaced: r.Namespaced,
				Kind:       r.Kind,
				Verbs:      statusVerbs,
			})
		}
		if hasApproval(r) {
			out.APIResources = append(out.APIResources, metav1.APIResource{
				Name: r.GVR.Resource + "/approval", Kind: r.Kind, Verbs: statusVerbs,
			})
		}
		if hasScale(r.GVR, r.Unstructured) {
			out.APIResources = append(out.APIResources, metav1.APIResource{
				Name: r.GVR.Resource + "/scale", Namespaced: r.Namespaced,
				Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: scaleVerbs,
			})
		}
		if r.GVR == podsGVR && !r.Unstructured {
			out.APIResources = append(out.APIResources,
				metav1.APIResource{Name: "pods/binding", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
				metav1.APIResource{Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: metav1.Verbs{"create"}},
			)
		}
	}
	return out
}
