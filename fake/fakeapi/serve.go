package fakeapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/fake"
)

// Options configures Serve, ServeTest and Handler. The zero value serves
// on a loopback TCP listener and logs what it cannot tell the client.
type Options struct {
	// InMemory serves over in-memory connections (net.Pipe) instead of a
	// loopback TCP listener; the returned rest.Config dials them through
	// its Dial field. Nothing touches the network, so a server started
	// inside a testing/synctest bubble runs on the bubble's virtual time.
	InMemory bool
	// Protobuf answers a request whose Accept header prefers protobuf
	// (client-go's typed clients, restsource) in protobuf for a typed
	// resource, as kube-apiserver does; watches stream length-delimited
	// frames. False (the default) answers JSON, which such clients accept
	// too: a client whose Go types cannot decode protobuf, though it asks
	// for it (say controller-runtime's client with a type of its own
	// registered under a built-in kind), keeps working.
	Protobuf bool
	// ReportError receives the errors the handler cannot send to a
	// client: a watch event it cannot encode (the watch then ends). Nil
	// logs them with klog.
	ReportError func(error)
}

// Serve serves srv over kube-apiserver's REST API until ctx ends and
// returns a rest.Config for it: Host and, with Options.InMemory, Dial set;
// QPS, Burst and content types left to client-go's defaults, as in a
// kubeconfig. When ctx ends the server stops in the background: open
// watches end and connections close.
func Serve(ctx context.Context, srv *fake.Server, opts Options) (*rest.Config, error) {
	cfg, stop, err := start(srv, opts)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, stop)
	return cfg, nil
}

// ServeTest is Serve for tests: it fails tb if the server cannot start,
// reports errors with tb.Errorf unless Options.ReportError is set, and
// stops the server when the test ends, returning once every connection is
// closed and every request handler has returned.
func ServeTest(tb testing.TB, srv *fake.Server, opts Options) *rest.Config {
	tb.Helper()
	if opts.ReportError == nil {
		opts.ReportError = func(err error) { tb.Errorf("fakeapi: %v", err) }
	}
	cfg, stop, err := start(srv, opts)
	if err != nil {
		tb.Fatalf("fakeapi: %v", err)
	}
	tb.Cleanup(stop)
	return cfg
}

// Pipe serves h over in-memory connections (net.Pipe) and returns a
// rest.Config that dials them, and stop, which closes the server and every
// connection and returns once every request handler has returned. A
// dial after stop fails as a refused connection. It is what
// Options.InMemory uses, exported for a test that wraps Handler (to record
// or alter requests) and still wants no socket.
func Pipe(h http.Handler) (cfg *rest.Config, stop func()) {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	stop = serveOn(l, h)
	return &rest.Config{Host: "http://fakeapi.pipe", Dial: l.dial}, stop
}

// start serves srv as opts say; stop is idempotent and synchronous.
func start(srv *fake.Server, opts Options) (cfg *rest.Config, stop func(), err error) {
	if srv == nil {
		return nil, nil, errors.New("nil *fake.Server")
	}
	h := Handler(srv, opts)
	if opts.InMemory {
		cfg, stop = Pipe(h)
		return cfg, stop, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	return &rest.Config{Host: "http://" + l.Addr().String()}, serveOn(l, h), nil
}

// serveOn serves h on l until stop, which cancels every request's context
// (ending watches), closes l and every connection, and waits for the
// handlers.
func serveOn(l net.Listener, h http.Handler) (stop func()) {
	base, cancel := context.WithCancel(context.Background()) //lint:allow-background the server outlives the caller's call; stop cancels it
	// handlers counts the running handlers; none starts once stopped is
	// set (both guarded by mu), so that stop's Wait never races an Add.
	var (
		mu       sync.Mutex
		stopped  bool
		handlers sync.WaitGroup
	)
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			handlers.Add(1)
			mu.Unlock()
			defer handlers.Done()
			h.ServeHTTP(w, r)
		}),
		BaseContext: func(net.Listener) context.Context { return base },
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(l)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			_ = hs.Close()
			<-served
			mu.Lock()
			stopped = true
			mu.Unlock()
			handlers.Wait()
		})
	}
}

// pipeListener hands the server end of each dialled pipe to Accept.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial connects to the server, or fails as a refused connection once it
// has stopped.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	client.Close()
	server.Close()
	return nil, &net.OpError{Op: "dial", Net: "pipe", Err: syscall.ECONNREFUSED}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "fakeapi.pipe" }
