package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/fake"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// unstructuredCMServer serves ConfigMaps as unstructured objects, as the
// dynamic client returns them.
func unstructuredCMServer(t *testing.T) *fake.Server {
	return fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{
		{GVR: cmGVR, Kind: "ConfigMap", Namespaced: true, Unstructured: true},
	}})
}

func ucm(ns, name string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": labels},
	}}
}

// watch prints the initial list and then every change, in order, with the
// label selector applied on the server; stderr reports the sync and the
// final statistics.
func TestWatchAgainstFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := unstructuredCMServer(t)
		web := map[string]any{"app": "web"}
		mustCreate(t, srv, ucm("a", "one", web))
		mustCreate(t, srv, ucm("b", "two", web))
		mustCreate(t, srv, ucm("b", "other", map[string]any{"app": "db"}))
		var out, errOut bytes.Buffer
		done := make(chan error)
		go func() {
			done <- runWatch[*unstructured.Unstructured](ctx, srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}),
				watchOptions{name: "configmaps", allNamespaces: true, label: "app=web", duration: 10 * time.Second}, &out, &errOut)
		}()
		time.Sleep(2 * time.Second)
		three := mustCreate(t, srv, ucm("a", "three", web))
		time.Sleep(time.Second)
		three.SetAnnotations(map[string]string{"x": "y"})
		if _, err := srv.Update(ctx, three); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, srv, ucm("a", "ignored", map[string]any{"app": "db"}))
		time.Sleep(time.Second)
		if _, err := srv.Delete(ctx, ucm("b", "two", nil)); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := `EVENT            NAMESPACE            NAME                                     RESOURCEVERSION  AGE
ADDED            a                    one                                      1                0s
ADDED            b                    two                                      2                0s
ADDED            a                    three                                    4                0s
MODIFIED         a                    three                                    5                1s
DELETED          b                    two                                      7                4s
`
		if got := out.String(); got != want {
			t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
		}
		for _, s := range []string{"synced 2 configmaps in 0s (streaming list)",
			"final: 2 configmaps cached, 5 watch events"} {
			if !strings.Contains(errOut.String(), s) {
				t.Fatalf("stderr lacks %q:\n%s", s, errOut.String())
			}
		}
	})
}

// --watch-only hides the initial list.
func TestWatchOnlyAgainstFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := unstructuredCMServer(t)
		mustCreate(t, srv, ucm("a", "old", nil))
		var out, errOut bytes.Buffer
		done := make(chan error)
		go func() {
			done <- runWatch[*unstructured.Unstructured](t.Context(), srv.ListerWatcher(fake.LWOptions{Resource: cmGVR, Namespace: "a"}),
				watchOptions{name: "configmaps", namespace: "a", watchOnly: true, duration: 5 * time.Second}, &out, &errOut)
		}()
		time.Sleep(time.Second)
		mustCreate(t, srv, ucm("a", "new", nil))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want := "EVENT            NAME                                     RESOURCEVERSION  AGE\n" +
			"ADDED            new                                      2                0s\n"
		if out.String() != want {
			t.Fatalf("stdout:\n%s\nwant:\n%s", out.String(), want)
		}
	})
}

// --field-selector is applied on the server, ANDed with -l.
func TestWatchFieldSelectorAgainstFake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := unstructuredCMServer(t)
		mustCreate(t, srv, ucm("a", "x", map[string]any{"app": "web"}))
		mustCreate(t, srv, ucm("a", "y", map[string]any{"app": "web"}))
		mustCreate(t, srv, ucm("b", "x", map[string]any{"app": "db"}))
		var out, errOut bytes.Buffer
		err := runWatch[*unstructured.Unstructured](t.Context(), srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}),
			watchOptions{name: "configmaps", allNamespaces: true, label: "app=web", field: "metadata.name=x", duration: time.Second}, &out, &errOut)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[1], "ADDED            a                    x ") {
			t.Fatalf("stdout:\n%s", out.String())
		}
	})
}

// An initial list the server refuses for good (403) ends the watch with
// the reason, instead of retrying forever; a transient one (500) shows in
// the progress line and the watch carries on.
func TestWatchInitialListFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := unstructuredCMServer(t)
		if err := srv.FailNext(fake.Failure{Kind: fake.Forbidden, Times: 1000}); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		err := runWatch[*unstructured.Unstructured](t.Context(), srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}),
			watchOptions{name: "configmaps"}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "cannot list configmaps") || !strings.Contains(err.Error(), "forbidden") {
			t.Fatalf("err = %v, want a forbidden error", err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		srv := unstructuredCMServer(t)
		if err := srv.FailNext(fake.Failure{Kind: fake.InternalError, Times: 6}); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		err := runWatch[*unstructured.Unstructured](t.Context(), srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}),
			watchOptions{name: "configmaps", duration: 20 * time.Second}, &out, &errOut)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut.String(), "retrying after ServerError") || !strings.Contains(errOut.String(), "synced 0 configmaps") {
			t.Fatalf("stderr:\n%s", errOut.String())
		}
	})
}

func mustCreate(t *testing.T, srv *fake.Server, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := srv.Create(t.Context(), obj)
	if err != nil {
		t.Fatal(err)
	}
	return got.(*unstructured.Unstructured)
}
