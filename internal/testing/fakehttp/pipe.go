package fakehttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"

	"k8s.io/client-go/rest"
)

// Pipe serves h over in-memory connections (net.Pipe) and returns a
// rest.Config that dials them, and stop, which closes the server and
// every connection and returns once the server has stopped. Nothing
// touches the network, so it can run inside a testing/synctest bubble,
// where time is virtual: a test can let a reflector's backoff run for
// minutes in milliseconds.
func Pipe(h http.Handler) (cfg *rest.Config, stop func()) {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	cfg = &rest.Config{Host: "http://fakehttp.pipe", Dial: l.dial}
	return cfg, func() {
		_ = srv.Close()
		<-served
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
func (pipeAddr) String() string  { return "fakehttp.pipe" }
