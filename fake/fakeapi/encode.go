package fakeapi

import (
	"encoding/json"
	"errors"
	"mime"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// encoder encodes the objects of one resource for one request: as JSON in
// full (with apiVersion and kind, from the server's scheme); as
// PartialObjectMetadata when the Accept header asks for it (as client-go's
// metadata client does); or as protobuf when the Accept header prefers it
// and the resource is typed, as kube-apiserver answers a typed clientset.
type encoder struct {
	// codec is the JSON codec (also what a patch is applied to).
	codec        runtime.Encoder
	metadataOnly bool
	// proto, when set, is the protobuf serializer answers use, and
	// protoCodec its encoder for the resource's version.
	proto      *runtime.SerializerInfo
	protoCodec runtime.Encoder
}

func (h *handler) encoder(req request) encoder {
	gv := req.res.GVR.GroupVersion()
	e := encoder{codec: h.codecs.LegacyCodec(gv), metadataOnly: req.metadataOnly}
	if req.protobuf && !req.metadataOnly && !req.res.Unstructured {
		if info, ok := runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf); ok {
			e.proto, e.protoCodec = &info, h.codecs.EncoderForVersion(info.Serializer, gv)
		}
	}
	return e
}

// contentType is the Content-Type of the encoder's answers.
func (e encoder) contentType() string {
	if e.proto != nil {
		return runtime.ContentTypeProtobuf
	}
	return runtime.ContentTypeJSON
}

// prefersProtobuf reports whether an Accept header's first media range is
// protobuf without an as= (metadata or table) parameter.
func prefersProtobuf(accept string) bool {
	first, _, _ := strings.Cut(accept, ",")
	mt, params, err := mime.ParseMediaType(strings.TrimSpace(first))
	return err == nil && mt == runtime.ContentTypeProtobuf && params["as"] == ""
}

var metaV1 = metav1.SchemeGroupVersion.String()

func (e encoder) object(obj runtime.Object) ([]byte, error) {
	if e.proto != nil {
		return runtime.Encode(e.protoCodec, obj)
	}
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
	switch {
	case e.proto != nil:
		return runtime.Encode(e.protoCodec, list)
	case !e.metadataOnly:
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
