package restsource

import (
	"errors"
	"runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Content types accepted by Options.ContentType.
const (
	ContentTypeProtobuf = k8sruntime.ContentTypeProtobuf // "application/vnd.kubernetes.protobuf"
	ContentTypeJSON     = k8sruntime.ContentTypeJSON     // "application/json"
)

// Options configures a Source. Client and Resource are required.
type Options struct {
	// Client performs the requests, e.g. clientset.CoreV1().RESTClient().
	// Its base URL and group version select the API path; its transport,
	// authentication, rate limiter (lists only: watches are not throttled,
	// as in client-go) and warning handler are used unchanged.
	Client rest.Interface

	// Resource is the plural resource name, e.g. "pods".
	Resource string

	// GroupVersion, when set (its Version is not empty), is Resource's
	// group version, for a Client whose base URL does not select one: the
	// unversioned REST client behind client-go's metadata and dynamic
	// clients. Requests then go to /api/v1/... (the core group) or
	// /apis/GROUP/VERSION/... under the client's base URL, as those
	// clients' own do. Unset, the client's base URL and group version
	// select the path, as for a clientset's RESTClient.
	GroupVersion schema.GroupVersion

	// Namespace restricts the source to one namespace; "" means all
	// namespaces (and is required for cluster-scoped resources).
	Namespace string

	// ContentType is the encoding requested from the server:
	// ContentTypeProtobuf (default) or ContentTypeJSON. A protobuf request
	// also accepts JSON (as client-go does), for servers that cannot encode
	// the resource in protobuf; each response is decoded in the encoding
	// the server chose.
	ContentType string

	// DecodeWorkers is the number of goroutines decoding the objects of a
	// watch (and of a list) in parallel; results are always delivered in
	// the server's order. 0 means GOMAXPROCS (at most 8); 1 decodes inline
	// on the goroutine that reads the stream.
	DecodeWorkers int

	// TweakListOptions, if set, edits a copy of the options of every list
	// and watch (label and field selectors, ...), like client-go's
	// TweakListOptionsFunc.
	TweakListOptions func(*metav1.ListOptions)

	// Scheme knows the object type and its list kind; the default is
	// client-go's kubernetes scheme (every built-in type). Types without a
	// generated protobuf Unmarshal method are decoded through this scheme's
	// codecs.
	Scheme *k8sruntime.Scheme

	// StripManagedFields leaves every object's metadata.managedFields out
	// while decoding, in lists and watch events alike: the result is the
	// object decoded in full with ManagedFields set to nil afterwards (what
	// informer.StripManagedFields does), without the managedFields ever
	// being decoded or allocated. Protobuf skips the field by its wire
	// type; JSON cuts the member from the object's bytes before the typed
	// decoder sees it. T must have an ObjectMeta (GetObjectMeta); types on
	// the scheme's decoding path (no generated Unmarshal method) are
	// decoded in full and then stripped.
	StripManagedFields bool

	// Interner, if set, deduplicates the strings that repeat across the
	// decoded objects (namespaces, labels, annotations, owner references;
	// for pods also node, container, image, volume and env names, ...):
	// the cached objects share one copy of each. The metadata's
	// namespace, generateName, labels, annotations and finalizers are
	// interned straight from the bytes while decoding (protobuf and JSON);
	// the other strings just after. The objects are equal
	// to those decoded without it. One Interner may serve several Sources;
	// see NewInterner for its (bounded) size and Interner.Stats for its hit
	// rate.
	Interner *Interner

	// ShareResourceLists, with an Interner, makes equal ResourceLists
	// (containers' requests and limits, a pod's overhead) of different
	// objects one map, kept in the Interner's (bounded) table: a pod's
	// replicas then share their resource maps, a third of a typical
	// cached pod's bytes. The objects stay equal to those decoded without
	// it, but their ResourceLists must not be modified in place: treat
	// them as read-only, as every cached object should be (a Transform
	// that edits resources must build a new map). Objects copied with
	// DeepCopy have their own maps.
	ShareResourceLists bool

	// ShareRepeated, with an Interner, makes the parts that repeat across
	// objects one copy, kept in the Interner's (bounded) table of parts:
	// label and annotation maps and owner references of every type; for
	// pods also the parts the pods of one template have in common (a
	// container's command, args, ports, env, resources, volume mounts,
	// probes and security context; the pod's volumes' sources, affinity,
	// tolerations, node selector, topology spread constraints; a
	// container status's resources; the pointers to small values each
	// pod holds one of, such as its priority or a container status's
	// started). Parts are matched by their encoding,
	// so decoding an equal part is skipped too (protobuf); a part is kept
	// from its second sighting on. The objects stay equal to those
	// decoded without it, but these parts are shared: treat them as
	// read-only, as every cached object should be (a Transform that edits
	// labels or annotations must build a new map; slices are shared with
	// their capacity clipped, so an append copies). Objects copied with
	// DeepCopy have their own parts. It implies ShareResourceLists.
	ShareRepeated bool

	// ProjectionOf, if set, makes T a projection of this type (e.g.
	// &corev1.Pod{}): a slim struct declaring only the fields a
	// controller reads, with the JSON names and protobuf field numbers of
	// the source type's own fields (copy its struct tags). T is decoded
	// straight from the server's encoding of ProjectionOf — its kind, its
	// list kind, its fields — skipping every field T lacks, so the full
	// object is never built. ProjectionOf must be known to Scheme; T need
	// not be. T embeds metav1.TypeMeta and metav1.ObjectMeta (tags
	// json:"metadata" protobuf:"bytes,1,..."); its other fields are
	// strings, bools, integers, structs (decoded field by field, or by
	// their generated Unmarshal method if they have one: metav1.Time,
	// resource.Quantity, ...), pointers to those, slices of strings or
	// structs, and maps with string keys. With an Interner, T's strings
	// are interned as they are decoded. See the projection example.
	ProjectionOf k8sruntime.Object

	// GroupVersionKind is the kind of the objects of a Source of
	// unstructured.Unstructured (required there, its version at least;
	// unused elsewhere): the Source lists and watches Resource in JSON,
	// checks that the server's objects are of this kind, and keeps each
	// object's apiVersion and kind. Without a Kind, objects of any kind of
	// its group version are taken, and list items without a kind get the
	// list's kind without "List", as client-go's dynamic client does. A Source of metav1.PartialObjectMetadata needs no kind: it
	// asks the server for the metadata of Resource's objects, whatever
	// their kind (custom resources' too), in protobuf; if
	// GroupVersionKind is set there, every object's TypeMeta is set to it
	// (as controller-runtime's metadata informers do).
	GroupVersionKind schema.GroupVersionKind
}

// maxDefaultWorkers caps the default number of decode workers.
const maxDefaultWorkers = 8

func (o Options) withDefaults() (Options, error) {
	if o.Client == nil {
		return o, errors.New("restsource: Options.Client is required")
	}
	if o.Resource == "" {
		return o, errors.New("restsource: Options.Resource is required")
	}
	switch o.ContentType {
	case "":
		o.ContentType = ContentTypeProtobuf
	case ContentTypeProtobuf, ContentTypeJSON:
	default:
		return o, errors.New("restsource: Options.ContentType must be " + ContentTypeProtobuf + " or " + ContentTypeJSON + ", not " + o.ContentType)
	}
	if o.DecodeWorkers < 0 {
		return o, errors.New("restsource: Options.DecodeWorkers must not be negative")
	}
	if o.DecodeWorkers == 0 {
		o.DecodeWorkers = min(runtime.GOMAXPROCS(0), maxDefaultWorkers)
	}
	if o.Scheme == nil {
		o.Scheme = scheme.Scheme
	}
	return o, nil
}
