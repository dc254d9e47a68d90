package factory

import (
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
	"github.com/listwatch/listwatch/reflector"
)

func TestFactorySnapshots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for _, name := range []string{"x", "y"} {
			srv.Create(t.Context(), objects.ConfigMap("ns", name, objects.Data("v", "0")))
		}
		f := New(Options{})
		defer f.Shutdown()
		cms, err := For(f, "v1/configmaps", Selection{}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{Name: "cms"})
		if err != nil {
			t.Fatal(err)
		}
		block := make(chan struct{})
		reg, _ := cms.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { <-block }}, informer.HandlerOptions{})
		if _, err := For(f, "configmaps", Selection{Namespace: "none"}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{Name: "empty"}); err != nil {
			t.Fatal(err)
		}
		if s := f.Snapshots(); len(s) != 2 || s[0].Started || s[1].Synced {
			t.Fatalf("before Start: %+v", s)
		}
		f.Start(t.Context())
		if err := f.WaitForCacheSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		snaps := f.Snapshots()
		if len(snaps) != 2 || snaps[0].Name != "cms" || snaps[1].Name != "empty" {
			t.Fatalf("snapshots = %+v", snaps)
		}
		s := snaps[0]
		if !s.Started || !s.Synced || s.Objects != 2 || s.Status.Phase != reflector.PhaseWatching ||
			s.GVR != (schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}) || s.Resource != "v1/configmaps" {
			t.Fatalf("cms snapshot = %+v", s)
		}
		// The handler is stuck in its first call: one entry is in
		// progress, the other pending.
		if len(s.Handlers) != 1 || s.Handlers[0].Stats.Pending != 1 || s.Handlers[0].Stats != reg.Stats() {
			t.Fatalf("handlers = %+v, Stats = %+v", s.Handlers, reg.Stats())
		}
		// Two small ConfigMaps: a few hundred bytes each, estimated.
		if s.BytesPerObject < 200 || s.BytesPerObject > 4000 || s.Bytes < 2*s.BytesPerObject {
			t.Fatalf("cms footprint: %d bytes, %d per object", s.Bytes, s.BytesPerObject)
		}
		if snaps[1].Objects != 0 || snaps[1].Bytes != 0 || snaps[1].Namespace != "none" || len(snaps[1].Handlers) != 0 {
			t.Fatalf("empty snapshot = %+v", snaps[1])
		}
		close(block)
	})
}

func TestParseResource(t *testing.T) {
	for in, want := range map[string]schema.GroupVersionResource{
		"pods":                          {Resource: "pods"},
		"v1/pods":                       {Version: "v1", Resource: "pods"},
		"apps/v1/deployments":           {Group: "apps", Version: "v1", Resource: "deployments"},
		"apps/v1, Resource=deployments": {Group: "apps", Version: "v1", Resource: "deployments"},
		"/v1, Resource=configmaps":      {Version: "v1", Resource: "configmaps"},
		schema.GroupVersionResource{Version: "v1", Resource: "pods"}.String(): {Version: "v1", Resource: "pods"},
	} {
		if got := ParseResource(in); got != want {
			t.Errorf("ParseResource(%q) = %+v, want %+v", in, got, want)
		}
	}
}
