package fakeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/fake"
)

// MaxRequestBodyBytes is the largest request body served, kube-apiserver's
// limit (3 MiB); a larger one is a 413 RequestEntityTooLarge.
const MaxRequestBodyBytes = 3 << 20

// Handler returns an http.Handler that serves srv over kube-apiserver's
// REST API (see the package documentation). It routes the resources srv
// serves at the time of the call; Options.InMemory is ignored.
func Handler(srv *fake.Server, opts Options) http.Handler {
	h := &handler{
		srv:      srv,
		protobuf: opts.Protobuf,
		codecs:   serializer.NewCodecFactory(srv.Scheme()),
		report:   opts.ReportError,
		byGVR:    map[schema.GroupVersionResource]fake.Resource{},
		status:   map[schema.GroupVersionResource]bool{},
	}
	if h.report == nil {
		h.report = func(err error) { klog.ErrorS(err, "fakeapi") }
	}
	if info, ok := runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), runtime.ContentTypeJSON); ok {
		h.strictJSON = info.StrictSerializer
	}
	for _, r := range srv.Resources() {
		h.byGVR[r.GVR] = r
		h.resources = append(h.resources, r)
		if hasStatus(srv.Scheme(), r) {
			h.status[r.GVR] = true
		}
	}
	return h
}

// handler serves one fake.Server; immutable after Handler.
type handler struct {
	srv *fake.Server
	// protobuf is Options.Protobuf.
	protobuf bool
	codecs   serializer.CodecFactory
	report   func(error)
	// resources are srv's, in its order; byGVR indexes them.
	resources []fake.Resource
	byGVR     map[schema.GroupVersionResource]fake.Resource
	// status holds the resources with the status subresource.
	status map[schema.GroupVersionResource]bool
	// strictJSON is the strict JSON decoder of codecs, for the field
	// validation of patched objects.
	strictJSON runtime.Decoder
}

// request is a parsed resource path.
type request struct {
	res                          fake.Resource
	namespace, name, subresource string
	// metadataOnly is an Accept header asking for PartialObjectMetadata,
	// protobuf one preferring protobuf.
	metadataOnly, protobuf bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.discovery(w, r) {
		return
	}
	req, ok := h.route(r.URL.Path)
	if !ok {
		h.writeError(w, r, notFound(r.URL.Path))
		return
	}
	req.metadataOnly = strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata")
	req.protobuf = h.protobuf && prefersProtobuf(r.Header.Get("Accept"))
	if h.podSubresource(req) {
		if r.Method != http.MethodPost {
			h.writeError(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods/" + req.subresource}, strings.ToLower(r.Method)))
			return
		}
		h.createPodSubresource(w, r, req)
		return
	}
	if req.subresource == "scale" && hasScale(req.res.GVR, req.res.Unstructured) {
		h.serveScale(w, r, req)
		return
	}
	if req.subresource != "" && !(req.subresource == "status" && h.status[req.res.GVR]) && !(req.subresource == "approval" && hasApproval(req.res)) {
		h.writeError(w, r, notFound(r.URL.Path))
		return
	}
	if req.subresource != "" && r.Method != http.MethodGet && r.Method != http.MethodPut && r.Method != http.MethodPatch {
		h.writeError(w, r, apierrors.NewMethodNotSupported(req.res.GVR.GroupResource(), strings.ToLower(r.Method)))
		return
	}
	if verb := faultVerb(r.Method, req); verb != 0 {
		if err := h.srv.Fault(verb, req.res.GVR, req.namespace); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	switch {
	case r.Method == http.MethodGet && req.name == "":
		h.listOrWatch(w, r, req)
	case r.Method == http.MethodGet:
		h.get(w, r, req)
	case r.Method == http.MethodPost && req.name == "" && (req.namespace != "" || !req.res.Namespaced):
		h.create(w, r, req)
	case r.Method == http.MethodPut && req.name != "":
		h.update(w, r, req)
	case r.Method == http.MethodPatch && req.name != "":
		h.patch(w, r, req)
	case r.Method == http.MethodDelete && req.name != "":
		h.delete(w, r, req)
	case r.Method == http.MethodDelete:
		h.deleteCollection(w, r, req)
	default:
		h.writeError(w, r, apierrors.NewMethodNotSupported(req.res.GVR.GroupResource(), strings.ToLower(r.Method)))
	}
}

// faultVerb is the fake.Verb whose injected faults a request meets before
// it is served: that of a get or a write; zero for a list or a watch
// (which meet theirs in the fake) and for what is not served.
func faultVerb(method string, req request) fake.Verb {
	switch {
	case req.name == "" && method == http.MethodPost && (req.namespace != "" || !req.res.Namespaced):
		return fake.VerbCreate
	case req.name == "" && method == http.MethodDelete && req.subresource == "":
		return fake.VerbDeleteCollection
	case req.name == "":
		return 0
	}
	switch method {
	case http.MethodGet:
		return fake.VerbGet
	case http.MethodPut:
		return fake.VerbUpdate
	case http.MethodPatch:
		return fake.VerbPatch
	case http.MethodDelete:
		return fake.VerbDelete
	}
	return 0
}

// route parses /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]] and
// /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]] for
// a served resource; a namespaced resource's object needs a namespace, a
// cluster-scoped one's has none.
func (h *handler) route(p string) (req request, ok bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var gv schema.GroupVersion
	var rest []string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		gv, rest = schema.GroupVersion{Version: parts[1]}, parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gv, rest = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	default:
		return req, false
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		if res, served := h.byGVR[gv.WithResource(rest[2])]; served && res.Namespaced {
			req.namespace, rest = rest[1], rest[2:]
		}
	}
	if len(rest) > 3 {
		return req, false
	}
	res, served := h.byGVR[gv.WithResource(rest[0])]
	if !served {
		return req, false
	}
	req.res = res
	if len(rest) > 1 {
		req.name = rest[1]
	}
	if len(rest) > 2 {
		req.subresource = rest[2]
	}
	if req.name != "" && res.Namespaced && req.namespace == "" {
		return req, false
	}
	return req, req.namespace == "" || res.Namespaced
}

func (h *handler) listOrWatch(w http.ResponseWriter, r *http.Request, req request) {
	var opts metav1.ListOptions
	if err := scheme.ParameterCodec.DecodeParameters(r.URL.Query(), v1, &opts); err != nil {
		h.writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	enc := h.encoder(req)
	lw := h.srv.ListerWatcher(fake.LWOptions{Resource: req.res.GVR, Namespace: req.namespace})
	if !opts.Watch {
		list, err := lw.ListWithContext(r.Context(), opts)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeEncoded(w, r, http.StatusOK, enc.contentType(), func() ([]byte, error) { return enc.list(list) })
		return
	}
	wi, err := lw.WatchWithContext(r.Context(), opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	defer wi.Stop()
	write, contentType := h.watchWriter(w, enc)
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	// The watch ends when the request's context does (the client went, or
	// the server stops), or when the fake ends it.
	for ev := range wi.ResultChan() {
		raw, err := enc.object(ev.Object)
		if err != nil {
			h.report(fmt.Errorf("encoding a watch event: %w", err))
			return
		}
		if write(&metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}}) != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// watchWriter returns how a watch's events are written to w and the
// stream's content type: newline-separated JSON, or (for protobuf)
// length-delimited frames of raw protobuf WatchEvents, each carrying its
// object in the enveloped protobuf encoding, as kube-apiserver streams.
func (h *handler) watchWriter(w http.ResponseWriter, enc encoder) (func(*metav1.WatchEvent) error, string) {
	if enc.proto != nil && enc.proto.StreamSerializer != nil {
		frames := enc.proto.StreamSerializer.Framer.NewFrameWriter(w)
		ser := enc.proto.StreamSerializer.Serializer
		return func(ev *metav1.WatchEvent) error { return ser.Encode(ev, frames) },
			runtime.ContentTypeProtobuf + ";stream=watch"
	}
	out := json.NewEncoder(w)
	return func(ev *metav1.WatchEvent) error { return out.Encode(ev) }, runtime.ContentTypeJSON
}

func (h *handler) get(w http.ResponseWriter, r *http.Request, req request) {
	obj, err := h.srv.Get(r.Context(), req.res.GVR, req.namespace, req.name)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeObject(w, r, req, http.StatusOK, obj)
}

func (h *handler) create(w http.ResponseWriter, r *http.Request, req request) {
	var opts metav1.CreateOptions
	if err := h.writeOptions(r, &opts, false); err != nil {
		h.writeError(w, r, err)
		return
	}
	obj, m, err := h.decodeBody(w, r, req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := matchNamespace(m, req); err != nil {
		h.writeError(w, r, err)
		return
	}
	out, err := h.srv.CreateWith(r.Context(), obj, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeObject(w, r, req, http.StatusCreated, out)
}

func (h *handler) update(w http.ResponseWriter, r *http.Request, req request) {
	var opts metav1.UpdateOptions
	if err := h.writeOptions(r, &opts, false); err != nil {
		h.writeError(w, r, err)
		return
	}
	obj, m, err := h.decodeBody(w, r, req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := matchNamespace(m, req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := matchName(m, req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if h.status[req.res.GVR] {
		cur, err := h.srv.Get(r.Context(), req.res.GVR, req.namespace, req.name)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		if obj, err = h.prepareWrite(req, cur, obj); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	out, err := h.srv.UpdateWith(r.Context(), obj, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeObject(w, r, req, http.StatusOK, out)
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request, req request) {
	var opts metav1.DeleteOptions
	if err := h.writeOptions(r, &opts, true); err != nil {
		h.writeError(w, r, err)
		return
	}
	obj, err := h.newObject(req.res)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	m, _ := meta.Accessor(obj)
	m.SetNamespace(req.namespace)
	m.SetName(req.name)
	out, deleted, err := h.srv.DeleteWith(r.Context(), obj, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if !deleted {
		// Kept by its finalizers: the object as now stored, with a 202
		// when the client asked for cascading deletion the old way, as
		// kube-apiserver answers.
		code := http.StatusOK
		//lint:ignore SA1019 orphanDependents is still served
		if od := opts.OrphanDependents; od != nil && !*od {
			code = http.StatusAccepted
		}
		h.writeObject(w, r, req, code, out)
		return
	}
	gm, _ := meta.Accessor(out)
	// As kube-apiserver's registry for a resource that does not return
	// the deleted object: a Status naming it.
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: req.name, Group: req.res.GVR.Group, Kind: req.res.GVR.Resource, UID: gm.GetUID(),
		},
	}
	h.writeEncoded(w, r, http.StatusOK, runtime.ContentTypeJSON, func() ([]byte, error) { return json.Marshal(st) })
}

// deleteCollection deletes the objects a list with the request's label
// and field selectors would show, each as a delete with the body's
// DeleteOptions would (preconditions apart, as a collection has none), and
// answers them as a list, as kube-apiserver does.
func (h *handler) deleteCollection(w http.ResponseWriter, r *http.Request, req request) {
	var opts metav1.ListOptions
	if err := scheme.ParameterCodec.DecodeParameters(r.URL.Query(), v1, &opts); err != nil {
		h.writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	var dopts metav1.DeleteOptions
	if err := h.writeOptions(r, &dopts, true); err != nil {
		h.writeError(w, r, err)
		return
	}
	list, err := h.srv.DeleteCollectionWith(r.Context(), req.res.GVR, req.namespace, dopts, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	enc := h.encoder(req)
	h.writeEncoded(w, r, http.StatusOK, enc.contentType(), func() ([]byte, error) { return enc.list(list) })
}

// writeOptions decodes a write's query parameters into opts and, with
// body (deletes), the options body too. The fake.Server's write methods
// validate them.
func (h *handler) writeOptions(r *http.Request, opts runtime.Object, body bool) error {
	if err := scheme.ParameterCodec.DecodeParameters(r.URL.Query(), v1, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if body {
		b, err := readBody(r)
		if err != nil {
			return err
		}
		if len(b) > 0 {
			if err := decodeOptions(r, b, opts); err != nil {
				return err
			}
		}
	}
	return nil
}

// v1 is the version query parameters and options bodies are read in.
var v1 = schema.GroupVersion{Version: "v1"}

// decodeOptions decodes an options body (client-go's typed clients send
// DeleteOptions as protobuf) with client-go's scheme, which registers the
// options types in every version.
func decodeOptions(r *http.Request, body []byte, into runtime.Object) error {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType(r))
	if !ok {
		return errUnsupportedMediaType(mediaTypes(scheme.Codecs.SupportedMediaTypes()))
	}
	defaults := v1.WithKind("DeleteOptions")
	if _, _, err := info.Serializer.Decode(body, &defaults, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// matchNamespace fills in an object's empty namespace from the URL, and
// refuses a different one, as kube-apiserver does.
func matchNamespace(m metav1.Object, req request) error {
	switch ns := m.GetNamespace(); {
	case !req.res.Namespaced:
		return nil
	case ns == "":
		m.SetNamespace(req.namespace)
	case ns != req.namespace:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// matchName refuses an object whose name is not the URL's, as
// kube-apiserver does.
func matchName(m metav1.Object, req request) error {
	if m.GetName() != req.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), req.name))
	}
	return nil
}

// readBody reads a request body up to MaxRequestBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if len(body) > MaxRequestBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxRequestBodyBytes))
	}
	return body, nil
}

// mediaType is a request's Content-Type without parameters.
func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return r.Header.Get("Content-Type")
	}
	return mt
}

// decodeBody decodes a create's or update's body as an object of req's
// resource: JSON, YAML or protobuf for a typed resource (client-go's typed
// clients send protobuf), JSON for an unstructured one. A missing
// apiVersion and kind default to the resource's.
func (h *handler) decodeBody(w http.ResponseWriter, r *http.Request, req request) (runtime.Object, metav1.Object, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, nil, err
	}
	gvk := req.res.GVR.GroupVersion().WithKind(req.res.Kind)
	mt := mediaType(r)
	var obj runtime.Object
	if req.res.Unstructured {
		if mt != runtime.ContentTypeJSON {
			return nil, nil, errUnsupportedMediaType([]string{runtime.ContentTypeJSON})
		}
		obj, err = decodeUnstructured(body, gvk)
	} else {
		info, ok := runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), mt)
		if !ok {
			return nil, nil, errUnsupportedMediaType(mediaTypes(h.codecs.SupportedMediaTypes()))
		}
		var got *schema.GroupVersionKind
		obj, got, err = info.Serializer.Decode(body, &gvk, nil)
		if err == nil && got.GroupVersion() != gvk.GroupVersion() {
			err = fmt.Errorf("the API version in the data (%s) does not match the expected API version (%v)", got.GroupVersion(), gvk.GroupVersion())
		} else if err == nil && got.Kind != gvk.Kind {
			err = fmt.Errorf("the kind in the data (%s) does not match the expected kind (%s)", got.Kind, gvk.Kind)
		}
		if err == nil && info.StrictSerializer != nil {
			err = fieldErrors(w, r, info.StrictSerializer, body, gvk, func(strict error) error {
				return apierrors.NewBadRequest(strict.Error())
			})
			if err != nil {
				return nil, nil, err
			}
		}
	}
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	return obj, m, nil
}

// fieldErrors is kube-apiserver's server-side field validation of a typed
// body, decoded again with the strict variant of its serializer: with the
// request's fieldValidation Strict, its unknown and duplicate fields are
// the error refuse makes of the strict decoding error (a 400 for a create
// or an update, a 422 for a patch); with Warn (the default) each is a
// Warning header (299) on w; with Ignore neither. A custom resource's
// body is not checked: fakeapi has no CRD schemas.
func fieldErrors(w http.ResponseWriter, r *http.Request, strict runtime.Decoder, body []byte, gvk schema.GroupVersionKind, refuse func(error) error) error {
	directive := r.URL.Query().Get("fieldValidation")
	if directive == "" {
		directive = metav1.FieldValidationWarn
	}
	if directive != metav1.FieldValidationWarn && directive != metav1.FieldValidationStrict {
		return nil
	}
	_, _, err := strict.Decode(body, &gvk, nil)
	se, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return nil
	}
	if directive == metav1.FieldValidationStrict {
		return refuse(se)
	}
	for _, e := range se.Errors() {
		if hv, err := utilnet.NewWarningHeader(299, "-", e.Error()); err == nil {
			w.Header().Add("Warning", hv)
		}
	}
	return nil
}

// decodeUnstructured decodes a JSON object, defaulting apiVersion and kind.
func decodeUnstructured(body []byte, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	var content map[string]any
	// apimachinery's json reads integers as int64, as kube-apiserver's
	// unstructured decoding does.
	if err := utiljson.Unmarshal(body, &content); err != nil {
		return nil, err
	}
	if content == nil {
		return nil, errors.New("the request body is not a JSON object")
	}
	u := &unstructured.Unstructured{Object: content}
	if u.GetAPIVersion() == "" {
		u.SetAPIVersion(gvk.GroupVersion().String())
	}
	if u.GetKind() == "" {
		u.SetKind(gvk.Kind)
	}
	if got := u.GroupVersionKind(); got != gvk {
		return nil, fmt.Errorf("the object's apiVersion and kind (%s) are not the resource's (%s)", got, gvk)
	}
	return u, nil
}

// mediaTypes are the media types of serializers.
func mediaTypes(infos []runtime.SerializerInfo) []string {
	var out []string
	for _, info := range infos {
		out = append(out, info.MediaType)
	}
	return out
}

// errUnsupportedMediaType is kube-apiserver's 415 for a body it cannot
// read.
func errUnsupportedMediaType(accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

// newObject is an empty object of res's kind.
func (h *handler) newObject(res fake.Resource) (runtime.Object, error) {
	gvk := res.GVR.GroupVersion().WithKind(res.Kind)
	if res.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	obj, err := h.srv.Scheme().New(gvk)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

// notFound is kube-apiserver's 404 for a path it does not serve.
func notFound(path string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

// writeObject writes obj as req's encoder encodes it.
func (h *handler) writeObject(w http.ResponseWriter, r *http.Request, req request, code int, obj runtime.Object) {
	enc := h.encoder(req)
	h.writeEncoded(w, r, code, enc.contentType(), func() ([]byte, error) { return enc.object(obj) })
}

// writeEncoded writes what encode returns, of contentType, or its error.
func (h *handler) writeEncoded(w http.ResponseWriter, r *http.Request, code int, contentType string, encode func() ([]byte, error)) {
	data, err := encode()
	if err != nil {
		h.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// writeError writes err as kube-apiserver's Status body and code (with
// Retry-After when it asks for one). An error that is no Status, but a
// refused connection, as the fake's faults and Down give, drops the
// connection without an answer; any other is a 500.
func (h *handler) writeError(w http.ResponseWriter, _ *http.Request, err error) {
	var se apierrors.APIStatus
	var ue *url.Error
	var ne *net.OpError
	if !errors.As(err, &se) && (errors.As(err, &ue) || errors.As(err, &ne)) {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, herr := hj.Hijack(); herr == nil {
				_ = conn.Close()
				return
			}
		}
	}
	var status metav1.Status
	if se != nil {
		status = se.Status()
	} else {
		status = apierrors.NewInternalError(err).Status()
	}
	status.Kind, status.APIVersion = "Status", "v1"
	if d := status.Details; d != nil && d.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(d.RetryAfterSeconds))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_ = json.NewEncoder(w).Encode(status)
}
