package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// resolved is a resource argument mapped through discovery.
type resolved struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// resolveResource maps a kubectl-style resource argument ("pods", "cm",
// "deployments.apps", "deploy.v1.apps") to a served resource, using
// discovery and its short names as kubectl does.
func resolveResource(disc discovery.DiscoveryInterface, arg string) (resolved, error) {
	arg = strings.ToLower(strings.TrimSpace(arg))
	if arg == "" || strings.ContainsAny(arg, "/ ") {
		return resolved{}, fmt.Errorf("invalid resource %q: want a name like pods, cm or deployments.apps", arg)
	}
	mapper := restmapper.NewShortcutExpander(
		restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), disc, nil)
	full, gr := schema.ParseResourceArg(arg)
	var gvr schema.GroupVersionResource
	var err error
	if full != nil {
		gvr, err = mapper.ResourceFor(*full)
	}
	if full == nil || err != nil {
		gvr, err = mapper.ResourceFor(gr.WithVersion(""))
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return resolved{}, fmt.Errorf("the server doesn't have a resource type %q", arg)
		}
		return resolved{}, err
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return resolved{}, err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return resolved{}, err
	}
	return resolved{GVR: gvr, Kind: gvk.Kind, Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}, nil
}
