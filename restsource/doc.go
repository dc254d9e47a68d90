// Package restsource is a list/watch source that decodes the API server's
// responses itself, faster than client-go's REST decoding (per frame on one
// goroutine, and more with several decode workers; the figures are in
// docs/benchmarks.md, and only there), and plugs into listwatch's
// reflector and client-go's informers alike.
//
// client-go decodes a watch on one goroutine and in several passes: the
// frame into a WatchEvent (copying the object's bytes), then the object
// through the scheme, which for JSON first parses the whole object once to
// find its kind and then again to decode it. restsource reads the frames
// on one goroutine and decodes them on DecodeWorkers goroutines, keeping
// the server's order:
//
//   - protobuf: the WatchEvent frame is split with protowire, the "k8s\x00"
//     magic and the runtime.Unknown envelope are stripped by hand (no copy),
//     apiVersion and kind are checked, and the type's generated Unmarshal
//     decodes the object;
//   - JSON: frames are delimited by a bracket-counting scan, the envelope
//     {"type", "object"} is split without decoding, and the object is
//     decoded once, by a decoder compiled for its Go type that writes
//     plain JSON straight into it and hands anything else to
//     sigs.k8s.io/json (apimachinery's decoder, whose semantics it keeps:
//     json_typed.go), its kind checked from the TypeMeta that fills in.
//
// Decoded objects are what client-go's clientset returns: same fields,
// empty TypeMeta. ERROR events carry a *metav1.Status, so reflectors see
// 410 Expired and the like; BOOKMARK events an object of type T with only
// metadata. A frame that cannot be decoded (garbage, wrong kind, unknown
// event type) ends the watch with an ERROR event carrying a 500 Status, as
// client-go's watch does; a stream that ends inside a frame closes the
// result channel and is logged, like an ordinary disconnect.
//
// Lists are decoded the same way, their items in parallel, each into its
// own allocation, and returned as a *metav1.List whose Items hold the
// objects (runtime.RawExtension{Object: T}): meta.ExtractListWithAlloc
// hands them on without copying. API errors are the REST client's own
// (*apierrors.StatusError for 403, 404, 410, 429, 5xx, ...).
//
// # Usage
//
//	src, err := restsource.New[*corev1.Pod](restsource.Options{
//		Client:   clientset.CoreV1().RESTClient(),
//		Resource: "pods",
//	})
//	if err != nil {
//		return err
//	}
//	inf, err := informer.New(informer.Options[*corev1.Pod]{Source: reflector.FromListerWatcher(src)})
//
// or, for client-go, cache.NewSharedIndexInformer(src, &corev1.Pod{}, 0, indexers).
// Options.TweakListOptions sets label and field selectors; Namespace
// restricts the source to one namespace. Any type registered in
// Options.Scheme (client-go's scheme by default) works; types with a
// generated protobuf Unmarshal method (every built-in type) take the fast
// path, others are decoded through the scheme. For custom resources
// served only as JSON, set ContentType to ContentTypeJSON.
//
// [Options.StripManagedFields] leaves metadata.managedFields out while
// decoding, in lists and watch events: protobuf skips the field by its wire
// type, JSON cuts the member from the bytes before the typed decoder runs,
// so the entries (often half of a pod's bytes) are never allocated. The
// objects equal a full decode followed by informer.StripManagedFields,
// which the transform then need not do. The memory options together, as
// recommended for caches of full objects:
//
//	src, err := restsource.New[*corev1.Pod](restsource.Options{
//		Client:             clientset.CoreV1().RESTClient(),
//		Resource:           "pods",
//		StripManagedFields: true,
//		Interner:           restsource.NewInterner(0),
//		ShareRepeated:      true,
//	})
//
// [Options.Interner] makes the decoded objects share the strings that
// repeat across them (namespaces, labels, annotations, owner references;
// for pods also node, container, image, volume and env names) through an
// [Interner]: a bounded table that admits a string on its second sighting
// and grows with the strings that repeat, up to its capacity
// ([NewInterner]), safe to share between Sources, whose [Interner.Stats]
// report its hit rate and memory. The objects equal those decoded without
// it. [Options.ShareResourceLists] goes further: equal ResourceLists
// (containers' requests and limits) of different objects become one map,
// which nobody may then modify in place (cached objects are read-only
// anyway). [Options.ShareRepeated] goes furthest for whole objects: the
// parts that repeat (label and annotation maps, owner references, a
// ConfigMap's data; the env, ports, probes, resources and security
// contexts of the containers of one pod template, its affinity,
// tolerations and volume sources, ...) are matched by their encoding,
// decoded once and shared, read-only in the same way. docs/operations.md
// ("Memory") says what each option saves and docs/benchmarks.md has the
// measured figures on a real kube-apiserver, against client-go's informer
// with controller-runtime's TransformStripManagedFields.
//
// [CompactTransform] brings the stripping, the interning and the shared
// ResourceLists to caches whose objects others decode (client-go's
// informers, controller-runtime's own cache), as a transform: it saves the
// bytes the cache holds, but the objects are decoded in full first, so it
// costs CPU instead of saving it.
//
// [Options.ProjectionOf] goes furthest: T is then a user-declared slim
// struct (a projection) holding only the fields a controller reads, with
// the JSON names and protobuf numbers of the served type's own fields, and
// restsource decodes it straight from the server's bytes, skipping all
// else; New checks every declared field against the served type:
//
//	type PodPlacement struct {
//		metav1.TypeMeta   `json:",inline"`
//		metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
//		Spec              struct {
//			NodeName string `json:"nodeName,omitempty" protobuf:"bytes,10,opt,name=nodeName"`
//		} `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
//	}
//	// ... and a DeepCopyObject method: *PodPlacement is a runtime.Object.
//
//	src, err := restsource.New[*PodPlacement](restsource.Options{
//		Client:             clientset.CoreV1().RESTClient(),
//		Resource:           "pods",
//		ProjectionOf:       &corev1.Pod{},
//		StripManagedFields: true,
//		Interner:           restsource.NewInterner(0),
//	})
//
// A projection equals the full object decoded and then copied field by
// field into it (differential and fuzz tests), and takes a tenth of a
// full pod's memory in the benchmark.
//
// # Adding a kind
//
// What [Options.ShareRepeated] shares is declared in one place,
// parts_kinds.go: one message per Go type that holds parts, each field by
// its protobuf number and JSON name with how a new part is interned, read
// by one protobuf and one JSON walker (parts.go). To decode a kind in
// parts: declare its message (its metadata nested as the pod's is, its
// shared fields, and a rest that interns its own strings), declare the
// messages of its nested types the same way, add it to partKinds, and add
// objects of it to partsCorpora (parts_test.go). TestDeclarations then
// checks every field's number and name against the Go type's tags, and
// TestPartsDecodeLikeClientGo that it decodes from both encodings, through
// events and list items, as client-go's clientset decodes it, minus
// managedFields; it fails for a kind of partKinds without objects. Any
// kind not listed shares its metadata's parts only.
//
// # Concurrency
//
// A Source is safe for concurrent use. Each watch runs one reader
// goroutine, an emitter and DecodeWorkers decoders (one goroutine in all
// with DecodeWorkers 1); Stop, the cancellation of the watch's context or
// the end of the stream stops all of them, and Stop returns only after
// they have returned. Events are delivered in the server's order whatever
// the number of workers; at most 4×DecodeWorkers frames are in flight. A
// list decodes on up to DecodeWorkers goroutines that end before
// ListWithContext returns.
//
// # Testing
//
// The tests run client-go's clientset and restsource on the same bytes
// from an httptest server and require identical events, lists, Statuses
// and errors, in protobuf and JSON (unknown fields, bookmarks, ERROR
// events included); they check the order with many workers, garbage and
// truncated streams, Stop mid-stream and the query parameters sent, with
// goleak and the race detector. An integration test runs a listwatch and
// a client-go informer on restsource against a real kube-apiserver
// (internal/testing/testapiserver; skipped under -short). The memory options and
// projections are checked against a full decode (then stripped, or copied
// field by field into the projection) on a corpus of realistic pods, also
// re-encoded with their metadata in unusual places, in protobuf and JSON,
// and by fuzz tests (FuzzStripManagedFields, FuzzProjection). Benchmarks compare the
// decoding of one frame with client-go's:
//
//	go test -race ./restsource/
//	go test -run '^$' -fuzz FuzzProjection -fuzztime 1m ./restsource/
//	go test -run '^$' -bench . ./restsource/
package restsource
