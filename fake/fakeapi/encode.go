package fakeapi

import (
	"encoding/json"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// encoder encodes the objects of one resource as JSON, in full (with
// apiVersion and kind, from the server's scheme) or, for a request whose
// Accept header asks for it (as client-go's metadata client does), as
// PartialObjectMetadata.
type encoder struct {
	codec        runtime.Encoder
	metadataOnly bool
}

func (h *handler) encoder(req request) encoder {
	return encoder{codec: h.codecs.LegacyCodec(req.res.GVR.GroupVersion()), metadataOnly: req.metadataOnly}
}

var metaV1 = metav1.SchemeGroupVersion.String()

func (e encoder) object(obj runtime.Object) ([]byte, error) {
	if st, isStatus := obj.(*metav1.Status); isStatus {
		cp := *st
		cp.Kind, cp.APIVersion = "Status", "v1"
		return json.Marshal(cp)
	}
	if !e.metadataOnly {
		return runtime.Encode(e.codec, obj)
	}
	m, err := partial(obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

func (e encoder) list(list runtime.Object) ([]byte, error) {
	if !e.metadataOnly {
		return runtime.Encode(e.codec, list)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{
		TypeMeta: metav1.TypeMeta{APIVersion: metaV1, Kind: "PartialObjectMetadataList"},
		ListMeta: metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(), RemainingItemCount: lm.GetRemainingItemCount()},
	}
	for _, item := range items {
		m, err := partial(item)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *m)
	}
	return json.Marshal(out)
}

// partial is obj's metadata as a PartialObjectMetadata.
func partial(obj runtime.Object) (*metav1.PartialObjectMetadata, error) {
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: metaV1, Kind: "PartialObjectMetadata"}}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		md, _ := o.Object["metadata"].(map[string]any)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &m.ObjectMeta); err != nil {
			return nil, err
		}
	case metav1.ObjectMetaAccessor:
		om, ok := o.GetObjectMeta().(*metav1.ObjectMeta)
		if !ok {
			return nil, errors.New("fakeapi: an object without a metav1.ObjectMeta")
		}
		m.ObjectMeta = *om.DeepCopy()
	default:
		return nil, errors.New("fakeapi: an object without metadata")
	}
	return m, nil
}
