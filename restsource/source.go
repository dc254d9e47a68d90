package restsource

import (
	"bufio"
	"context"
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
	opts                    Options
	dec                     *objectDecoder[T, E]
	listAccept, watchAccept string // Accept headers (kinds.go)
	// path is the resource's path segments under the client's base URL
	// when Options.GroupVersion is set; nil otherwise.
	path []string
}

var (
	_ cache.ListerWatcher            = (*Source[*metav1.Status, metav1.Status])(nil)
	_ cache.ListerWatcherWithContext = (*Source[*metav1.Status, metav1.Status])(nil)
)

// New returns a Source for objects of type T (E is inferred: write
// New[*corev1.Pod](opts)). T must be known to Options.Scheme.
func New[T interface {
	*E
	runtime.Object
}, E any](opts Options) (*Source[T, E], error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dec, err := newObjectDecoder[T, E](opts)
	if err != nil {
		return nil, err
	}
	s := &Source[T, E]{opts: opts, dec: dec, path: resourcePath(opts)}
	s.listAccept, s.watchAccept = acceptHeaders(opts, T(new(E)))
	return s, nil
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
func (s *Source[T, E]) request(opts metav1.ListOptions) *rest.Request {
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
func (s *Source[T, E]) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
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
func (s *Source[T, E]) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
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
func (s *Source[T, E]) List(opts metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), opts)
}

// Watch implements cache.Watcher (without a context); Stop ends it.
func (s *Source[T, E]) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), opts)
}
