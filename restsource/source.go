package restsource

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Source lists and watches one resource, decoding the responses itself
// into objects of type T. It implements client-go's cache.ListerWatcher
// and cache.ListerWatcherWithContext. It is safe for concurrent use.
type Source[T interface {
	*E
	runtime.Object
}, E any] struct {
	source[T]
}

// Objects is a [Source] of objects whose Go type is known only at run
// time (a custom resource's type in a scheme, given by a constructor),
// decoded the same way: see [NewObjects].
type Objects struct {
	source[runtime.Object]
}

// source is the engine of Source and Objects.
type source[T runtime.Object] struct {
	opts                    Options
	dec                     *objectDecoder[T]
	listAccept, watchAccept string // Accept headers (kinds.go)
	// path is the resource's path segments under the client's base URL
	// when Options.GroupVersion is set; nil otherwise.
	path []string
}

var (
	_ cache.ListerWatcher            = (*Source[*metav1.Status, metav1.Status])(nil)
	_ cache.ListerWatcherWithContext = (*Source[*metav1.Status, metav1.Status])(nil)
	_ cache.ListerWatcherWithContext = (*Objects)(nil)
)

// New returns a Source for objects of type T (E is inferred: write
// New[*corev1.Pod](opts)). T must be known to Options.Scheme.
func New[T interface {
	*E
	runtime.Object
}, E any](opts Options) (*Source[T, E], error) {
	s := &Source[T, E]{}
	if err := s.init(opts, func() T { return T(new(E)) }); err != nil {
		return nil, err
	}
	return s, nil
}

// NewObjects returns a Source for the objects newObject makes: new, empty
// objects of one Go type, a pointer to a struct known to Options.Scheme,
// for a type known only at run time (as scheme.New makes them for a
// kind). Everything [New] does for a type parameter it does for that
// type; Options.ProjectionOf is not supported.
func NewObjects(opts Options, newObject func() runtime.Object) (*Objects, error) {
	if opts.ProjectionOf != nil {
		return nil, errors.New("restsource: NewObjects does not take Options.ProjectionOf")
	}
	if t := reflect.TypeOf(newObject()); t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("restsource: NewObjects needs objects that are pointers to structs, not %T", newObject())
	}
	s := &Objects{}
	if err := s.init(opts, newObject); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *source[T]) init(opts Options, newObj func() T) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	dec, err := newObjectDecoder(opts, newObj)
	if err != nil {
		return err
	}
	s.opts, s.dec, s.path = opts, dec, resourcePath(opts)
	s.listAccept, s.watchAccept = acceptHeaders(opts, newObj())
	return nil
}

// resourcePath returns the segments of the resource's path for
// Options.GroupVersion ("api", "v1", "namespaces", ns, "pods"), or nil
// without it.
func resourcePath(opts Options) []string {
	gv := opts.GroupVersion
	if gv.Version == "" {
		return nil
	}
	p := []string{"api", gv.Version}
	if gv.Group != "" {
		p = []string{"apis", gv.Group, gv.Version}
	}
	if opts.Namespace != "" {
		p = append(p, "namespaces", opts.Namespace)
	}
	return append(p, opts.Resource)
}

// listParamsVersion is the version ListOptions are encoded in: query
// parameters are the same in every group.
var listParamsVersion = schema.GroupVersion{Version: "v1"}

// request builds the GET of a list or watch with client-go's query
// parameters (including timeoutSeconds and the matching client timeout).
func (s *source[T]) request(opts metav1.ListOptions) *rest.Request {
	if s.opts.TweakListOptions != nil {
		s.opts.TweakListOptions(&opts)
	}
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	accept := s.listAccept
	if opts.Watch {
		accept = s.watchAccept
	}
	r := s.opts.Client.Get()
	switch {
	case s.opts.GroupVersion.Version != "":
		r = r.AbsPath(s.path...)
	case s.opts.Namespace != "":
		r = r.Namespace(s.opts.Namespace).Resource(s.opts.Resource)
	default:
		r = r.Resource(s.opts.Resource)
	}
	return r.SpecificallyVersionedParams(&opts, scheme.ParameterCodec, listParamsVersion).
		SetHeader("Accept", accept).
		Timeout(timeout)
}

// ListWithContext implements cache.ListerWatcherWithContext: one list
// request (one page when opts.Limit is set), decoded as it arrives. The result is a *metav1.List
// whose items are RawExtensions holding a T each (or, for types without
// a generated Unmarshal method, the typed list), which client-go's and
// listwatch's reflectors both take as it is. Errors are the REST client's:
// apierrors.IsResourceExpired and the like work on them.
func (s *source[T]) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Watch = false
	// Throttling, Retry-After retries and errors as the clientset's List,
	// but the body is read as it arrives (list_stream.go): the objects are
	// decoded a batch at a time, never beside the whole response. Unlike
	// List, a GET whose connection is reset is not retried here: the
	// reflector lists again after its backoff.
	body, err := s.request(opts).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return s.readList(bufio.NewReaderSize(body, 64<<10))
}

// WatchWithContext implements cache.ListerWatcherWithContext. The watch
// ends when ctx is cancelled, on Stop, or when the stream ends; a frame
// that cannot be decoded ends it with an ERROR event (a 500 Status, as
// client-go's watch reports it). Like client-go's, the request is not
// throttled by the client's rate limiter, and a connection closed before
// the response yields an empty (closed) watch rather than an error.
func (s *source[T]) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	rctx, cancel := context.WithCancel(ctx)
	body, err := s.request(opts).Throttle(nil).Stream(rctx)
	if err != nil {
		cancel()
		if utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
			return watch.NewEmptyWatch(), nil
		}
		return nil, err
	}
	w := &watcher{
		result:  make(chan watch.Event),
		done:    make(chan struct{}),
		ctx:     ctx,
		cancel:  cancel,
		body:    body,
		exited:  make(chan struct{}),
		logger:  klog.FromContext(ctx),
		workers: s.opts.DecodeWorkers,
		decoder: func(isJSON bool) eventDecoder { return newEventDecoder(s.dec, isJSON) },
	}
	go w.run(bufio.NewReaderSize(body, 64<<10))
	return w, nil
}

// List implements cache.Lister (without a context).
func (s *source[T]) List(opts metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), opts)
}

// Watch implements cache.Watcher (without a context); Stop ends it.
func (s *source[T]) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), opts)
}
