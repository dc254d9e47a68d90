package fake

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// resourceState is one served resource type and its current objects.
type resourceState struct {
	// cfg is the validated configuration; immutable.
	cfg Resource
	// gvk and listGVK are the object and list kinds; immutable.
	gvk, listGVK schema.GroupVersionKind
	// scheme builds typed lists; immutable.
	scheme *runtime.Scheme
	// proto is an empty object of the resource's type (apiVersion and kind
	// set for unstructured); copied, never handed out. Immutable.
	proto runtime.Object
	// fieldLabels are the extra field selector labels: the keys FieldGetter
	// returns for an empty object. Immutable.
	fieldLabels fields.Set
	// objects maps a key ("ns/name" or "name") to the stored object. Stored
	// objects are private deep copies and are never mutated once stored: a
	// write replaces the map entry. Guarded by Server.mu.
	objects map[string]runtime.Object
}

func newResourceState(cfg Resource, sch *runtime.Scheme) (*resourceState, error) {
	if cfg.GVR.Resource == "" || cfg.GVR.Version == "" || cfg.Kind == "" {
		return nil, fmt.Errorf("fake: resource %v needs a GVR with version and resource, and a Kind", cfg.GVR)
	}
	r := &resourceState{
		cfg:     cfg,
		gvk:     cfg.GVR.GroupVersion().WithKind(cfg.Kind),
		listGVK: cfg.GVR.GroupVersion().WithKind(cfg.Kind + "List"),
		scheme:  sch,
		objects: map[string]runtime.Object{},
	}
	if cfg.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(r.gvk)
		r.proto = u
		r.setFieldLabels()
		return r, nil
	}
	if !sch.Recognizes(r.listGVK) {
		return nil, fmt.Errorf("fake: scheme does not know %v; register it or set Unstructured", r.listGVK)
	}
	obj, err := sch.New(r.gvk)
	if err != nil {
		return nil, fmt.Errorf("fake: scheme does not know %v; register it or set Unstructured: %w", r.gvk, err)
	}
	r.proto = obj
	r.setFieldLabels()
	return r, nil
}

func (r *resourceState) setFieldLabels() {
	if r.cfg.FieldGetter != nil {
		r.fieldLabels = r.cfg.FieldGetter(r.proto.DeepCopyObject())
	}
}

func (r *resourceState) groupResource() schema.GroupResource { return r.cfg.GVR.GroupResource() }

// etcdKey is the key kube-apiserver would store the object under, as named
// in StorageError messages: /registry/<resource>/... for the core group,
// /registry/<group>/<resource>/... otherwise, as for custom resources.
// (Built-in types of other groups, such as apps deployments, really live
// under /registry/<resource>; the fake cannot tell them apart.)
func (r *resourceState) etcdKey(namespace, name string) string {
	prefix := "/registry/" + r.cfg.GVR.Resource
	if r.cfg.GVR.Group != "" {
		prefix = "/registry/" + r.cfg.GVR.Group + "/" + r.cfg.GVR.Resource
	}
	if namespace != "" {
		prefix += "/" + namespace
	}
	return prefix + "/" + name
}

// newObject returns an empty object of the resource's type; for unstructured
// resources it carries apiVersion and kind, as a decoded one would.
func (r *resourceState) newObject() runtime.Object { return r.proto.DeepCopyObject() }

// newList returns a list object holding items (already private copies).
func (r *resourceState) newList(items []runtime.Object) (runtime.Object, error) {
	var list runtime.Object
	if r.cfg.Unstructured {
		ul := &unstructured.UnstructuredList{}
		ul.SetGroupVersionKind(r.listGVK)
		list = ul
	} else {
		obj, err := r.scheme.New(r.listGVK)
		if err != nil {
			return nil, err
		}
		list = obj
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("fake: building %v: %w", r.listGVK, err)
	}
	return list, nil
}

// bookmark returns a bookmark object: the resource's type with only
// metadata.resourceVersion set (plus the initial-events-end annotation when
// initialEnd is set).
func (r *resourceState) bookmark(rv uint64, initialEnd bool) runtime.Object {
	obj := r.newObject()
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(formatRV(rv))
	if initialEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return obj
}

// admit checks that obj belongs to this resource and returns a private copy
// ready to store (typed objects lose their TypeMeta, as client-go's decoder
// drops it) with its metadata accessor.
func (r *resourceState) admit(obj runtime.Object) (runtime.Object, metav1.Object, error) {
	cp := obj.DeepCopyObject()
	if r.cfg.Unstructured {
		if _, ok := cp.(*unstructured.Unstructured); !ok {
			return nil, nil, fmt.Errorf("fake: resource %v wants *unstructured.Unstructured, got %T", r.cfg.GVR, obj)
		}
	} else {
		cp.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	m, err := meta.Accessor(cp)
	if err != nil {
		return nil, nil, err
	}
	if m.GetName() == "" && m.GetGenerateName() == "" {
		return nil, nil, apierrors.NewInvalid(r.gvk.GroupKind(), "", field.ErrorList{
			field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	if r.cfg.Namespaced && m.GetNamespace() == "" {
		return nil, nil, invalidf(r, m.GetName(), "metadata.namespace", "namespace is required for a namespaced resource")
	}
	if !r.cfg.Namespaced && m.GetNamespace() != "" {
		return nil, nil, invalidf(r, m.GetName(), "metadata.namespace", "namespace must be empty for a cluster-scoped resource")
	}
	return cp, m, nil
}

// key is the store key of an object with the given namespace and name.
func key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// fieldsOf returns the selectable fields of obj.
func (r *resourceState) fieldsOf(obj runtime.Object, m metav1.Object) fields.Set {
	set := fields.Set{"metadata.name": m.GetName()}
	if r.cfg.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	if r.cfg.FieldGetter != nil {
		for k, v := range r.cfg.FieldGetter(obj) {
			set[k] = v
		}
	}
	return set
}

// kindOf returns the kind of a typed or unstructured object.
func kindOf(sch *runtime.Scheme, obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		gvk := u.GroupVersionKind()
		if gvk.Kind == "" {
			return gvk, fmt.Errorf("fake: unstructured object has no apiVersion/kind")
		}
		return gvk, nil
	}
	kinds, _, err := sch.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("fake: unknown object type %T: %w", obj, err)
	}
	return kinds[0], nil
}

// validate applies kube-apiserver's generic metadata validation to an object
// about to be stored (after name generation): name (Resource.ValidateName),
// namespace, labels, annotations, owner references, finalizers and
// managedFields. A violation is a 422 Invalid on the object's kind.
func (r *resourceState) validate(m metav1.Object) error {
	nameFn := r.cfg.ValidateName
	if nameFn == nil {
		nameFn = apivalidation.NameIsDNSSubdomain
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, r.cfg.Namespaced, nameFn, field.NewPath("metadata"))
	if len(errs) > 0 {
		return apierrors.NewInvalid(r.gvk.GroupKind(), m.GetName(), errs)
	}
	return nil
}
