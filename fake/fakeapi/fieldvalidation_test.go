package fakeapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// warnings records the API warnings a client receives.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

// Server-side field validation of built-in types, as kube-apiserver's: an
// unknown field is a warning by default (fieldValidation=Warn), a 400 with
// Strict on a create or an update, a 422 on a patch, nothing with Ignore;
// a custom resource's body is not checked.
func TestFieldValidation(t *testing.T) {
	ctx := t.Context()
	_, cfg, _ := serve(t, fakeapi.Options{})
	cfg = rest.CopyConfig(cfg)
	var got warnings
	cfg.WarningHandler = &got
	dc := dynamic.NewForConfigOrDie(cfg)
	cms := dc.Resource(fake.ConfigMaps().GVR).Namespace("ns")
	cm := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"additionalField": "x", "data": map[string]any{"a": "1"}}}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetName(name)
		return u
	}

	if _, err := cms.Create(ctx, cm("warned"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := got.take(); len(w) != 1 || w[0] != `unknown field "additionalField"` {
		t.Errorf("default create: warnings %q, want one unknown field", w)
	}
	_, err := cms.Create(ctx, cm("strict"), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	wantStatus(t, "strict create", err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	if err == nil || err.Error() != `strict decoding error: unknown field "additionalField"` {
		t.Errorf("strict create: %v", err)
	}
	if _, err := cms.Create(ctx, cm("ignored"), metav1.CreateOptions{FieldValidation: metav1.FieldValidationIgnore}); err != nil {
		t.Fatal(err)
	}
	if w := got.take(); len(w) != 0 {
		t.Errorf("ignored create: warnings %q, want none", w)
	}
	upd, err := cms.Get(ctx, "ignored", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upd.Object["spec"] = map[string]any{"x": 1}
	_, err = cms.Update(ctx, upd, metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict})
	wantStatus(t, "strict update", err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec"`) {
		t.Errorf("strict update: %v", err)
	}

	patch := []byte(`{"data":{"b":"2"},"bogus":{"deep":true}}`)
	_, err = cms.Patch(ctx, "ignored", types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict})
	wantStatus(t, "strict patch", err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	if err == nil || !strings.Contains(err.Error(), `strict decoding error: unknown field "bogus"`) {
		t.Errorf("strict patch: %v", err)
	}
	if _, err := cms.Patch(ctx, "ignored", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := got.take(); len(w) != 1 || w[0] != `unknown field "bogus"` {
		t.Errorf("default patch: warnings %q, want one unknown field", w)
	}

	// A widget (unstructured) takes any field, with no warning.
	wgt := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"anything": "goes"}}}
	wgt.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	wgt.SetName("w")
	if _, err := dc.Resource(widgets.GVR).Namespace("ns").Create(ctx, wgt, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatal(err)
	}
	if w := got.take(); len(w) != 0 {
		t.Errorf("widget create: warnings %q, want none", w)
	}
}
