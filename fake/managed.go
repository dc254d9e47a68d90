package fake

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// manageFields records Options.FieldManager's managedFields entry on obj (m
// is its accessor), as kube-apiserver does for a create or update: one entry
// with operation Update whose FieldsV1 lists the fields the object sets. On
// an update (prev set) the entries come from obj if it carries any, else
// from prev; other managers' entries are kept. The entry's time moves only
// when its field set changes, so a no-op update stays a no-op.
//
// The field set approximates server-side apply's: every set field of the
// object but metadata (only labels and annotations count) and status; maps
// of scalars (data, labels) own themselves ("."); lists are owned as a
// whole, without per-item keys.
func (s *Server) manageFields(r *resourceState, obj runtime.Object, m, prev metav1.Object, now metav1.Time) {
	mgr := s.opts.FieldManager
	if mgr == "" {
		return
	}
	base := m.GetManagedFields()
	if len(base) == 0 && prev != nil {
		base = prev.GetManagedFields()
	}
	var entries []metav1.ManagedFieldsEntry
	var mine *metav1.ManagedFieldsEntry
	for i := range base {
		if base[i].Manager == mgr && base[i].Operation == metav1.ManagedFieldsOperationUpdate && mine == nil {
			mine = &base[i]
			continue
		}
		entries = append(entries, base[i])
	}
	raw := ownedFields(obj)
	if raw != nil {
		at := now
		if mine != nil && mine.FieldsV1 != nil && string(mine.FieldsV1.GetRawBytes()) == string(raw) && mine.Time != nil {
			at = *mine.Time
		}
		entries = append(entries, metav1.ManagedFieldsEntry{
			Manager:    mgr,
			Operation:  metav1.ManagedFieldsOperationUpdate,
			APIVersion: r.gvk.GroupVersion().String(),
			Time:       &at,
			FieldsType: "FieldsV1",
			FieldsV1:   metav1.NewFieldsV1(string(raw)),
		})
	}
	m.SetManagedFields(entries)
}

// ownedFields returns the FieldsV1 JSON of the fields obj sets, or nil if it
// sets none.
func ownedFields(obj runtime.Object) []byte {
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = u.UnstructuredContent()
	} else {
		c, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil
		}
		content = c
	}
	set := map[string]any{}
	for k, v := range content {
		switch k {
		case "apiVersion", "kind", "status":
		case "metadata":
			md, _ := v.(map[string]any)
			sub := map[string]any{}
			for _, mk := range []string{"labels", "annotations"} {
				if f := fieldSet(md[mk]); f != nil {
					sub["f:"+mk] = f
				}
			}
			if len(sub) > 0 {
				set["f:metadata"] = sub
			}
		default:
			if f := fieldSet(v); f != nil {
				set["f:"+k] = f
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	raw, err := json.Marshal(set)
	if err != nil {
		return nil
	}
	return raw
}

// fieldSet is the FieldsV1 node of one value: nil for an unset (nil or
// empty) value, {} for a scalar or a list, a node per key for a map (plus
// "." for a map of scalars).
func fieldSet(v any) map[string]any {
	switch v := v.(type) {
	case nil:
		return nil
	case map[string]any:
		if len(v) == 0 {
			return nil
		}
		node := map[string]any{}
		scalars := true
		for k, sub := range v {
			f := fieldSet(sub)
			if f == nil {
				continue
			}
			if _, isMap := sub.(map[string]any); isMap {
				scalars = false
			}
			node["f:"+k] = f
		}
		if len(node) == 0 {
			return nil
		}
		if scalars {
			node["."] = map[string]any{}
		}
		return node
	case []any:
		if len(v) == 0 {
			return nil
		}
	}
	return map[string]any{}
}
