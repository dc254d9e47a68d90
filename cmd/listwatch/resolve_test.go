package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Resource arguments resolve as kubectl resolves them: plural, singular,
// short name, resource.group and resource.version.group.
func TestResolveResource(t *testing.T) {
	disc := &fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"}, Verbs: []string{"list", "watch"}},
			{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: []string{"list", "watch"}},
			{Name: "nodes", SingularName: "node", Kind: "Node", ShortNames: []string{"no"}, Verbs: []string{"list", "watch"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Verbs: []string{"list", "watch"}},
		}},
	}}}
	deploy := resolved{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
	for arg, want := range map[string]resolved{
		"pods":                deploy.with("", "pods", "Pod", true),
		"pod":                 deploy.with("", "pods", "Pod", true),
		"po":                  deploy.with("", "pods", "Pod", true),
		"CM":                  deploy.with("", "configmaps", "ConfigMap", true),
		"nodes":               deploy.with("", "nodes", "Node", false),
		"deployments.apps":    deploy,
		"deploy":              deploy,
		"deployments.v1.apps": deploy,
		"deployment":          deploy,
	} {
		got, err := resolveResource(disc, arg)
		if err != nil || got != want {
			t.Errorf("%q: got %+v, %v; want %+v", arg, got, err, want)
		}
	}
	for arg, msg := range map[string]string{
		"bogus":          `the server doesn't have a resource type "bogus"`,
		"pods/x":         `invalid resource "pods/x"`,
		"":               `invalid resource ""`,
		"deployments.v2": `the server doesn't have a resource type "deployments.v2"`,
	} {
		if _, err := resolveResource(disc, arg); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err %v, want %q", arg, err, msg)
		}
	}
}

func (r resolved) with(group, resource, kind string, namespaced bool) resolved {
	return resolved{GVR: schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}, Kind: kind, Namespaced: namespaced}
}
