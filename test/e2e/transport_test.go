package e2e

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"

	"k8s.io/client-go/rest"
)

// requestCounter is an http.RoundTripper wrapper that counts the requests one
// client makes, classifies them as list pages, list cycles and watches, and
// can cut the client off from the server (a one-client network partition).
type requestCounter struct {
	next http.RoundTripper

	// total counts every request, including those refused while partitioned.
	total atomic.Int64
	// lists counts GETs without watch=true (every page of a paginated list).
	lists atomic.Int64
	// listCycles counts requests that start a list: a first page (no
	// continue token) or a streaming list (a watch with sendInitialEvents=true).
	listCycles atomic.Int64
	// watches counts watch requests, streaming lists included.
	watches atomic.Int64
	// streaming counts watches with sendInitialEvents=true.
	streaming atomic.Int64
	// forbidden counts responses with HTTP status 403.
	forbidden atomic.Int64

	mu sync.Mutex
	// partitioned, when true, makes RoundTrip fail with ECONNREFUSED without
	// reaching the server. Guarded by mu.
	partitioned bool
	// open holds the bodies of responses not yet closed, so that a partition
	// can cut the streams in flight. Guarded by mu.
	open map[*trackedBody]struct{}
}

// counted returns a copy of cfg whose requests go through a new requestCounter.
func counted(cfg *rest.Config) (*rest.Config, *requestCounter) {
	c := &requestCounter{open: map[*trackedBody]struct{}{}}
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		c.next = rt
		return c
	})
	return out, c
}

// errPartitioned is what a partitioned client sees: a refused connection,
// which every retry policy treats as transient.
var errPartitioned = &netError{syscall.ECONNREFUSED}

type netError struct{ errno syscall.Errno }

func (e *netError) Error() string { return "e2e partition: " + e.errno.Error() }
func (e *netError) Unwrap() error { return e.errno }

// RoundTrip classifies the request, then forwards it unless partitioned.
func (c *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.total.Add(1)
	q := req.URL.Query()
	switch {
	case q.Get("watch") == "true" || q.Get("watch") == "1":
		c.watches.Add(1)
		if q.Get("sendInitialEvents") == "true" {
			c.streaming.Add(1)
			c.listCycles.Add(1)
		}
	case req.Method == http.MethodGet:
		c.lists.Add(1)
		if q.Get("continue") == "" {
			c.listCycles.Add(1)
		}
	}
	c.mu.Lock()
	cut := c.partitioned
	c.mu.Unlock()
	if cut {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, errPartitioned
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusForbidden {
		c.forbidden.Add(1)
	}
	body := &trackedBody{ReadCloser: resp.Body, owner: c}
	c.mu.Lock()
	c.open[body] = struct{}{}
	c.mu.Unlock()
	resp.Body = body
	return resp, nil
}

// partition cuts the client off: open response bodies fail their next read
// and new requests are refused until heal.
func (c *requestCounter) partition() {
	c.mu.Lock()
	c.partitioned = true
	bodies := make([]*trackedBody, 0, len(c.open))
	for b := range c.open {
		bodies = append(bodies, b)
	}
	c.mu.Unlock()
	for _, b := range bodies {
		b.cut()
	}
}

// heal lets requests through again.
func (c *requestCounter) heal() {
	c.mu.Lock()
	c.partitioned = false
	c.mu.Unlock()
}

// requestCounts is a snapshot of a requestCounter.
type requestCounts struct {
	Total, Lists, ListCycles, Watches, Streaming, Forbidden int64
}

func (c *requestCounter) snapshot() requestCounts {
	return requestCounts{
		Total:      c.total.Load(),
		Lists:      c.lists.Load(),
		ListCycles: c.listCycles.Load(),
		Watches:    c.watches.Load(),
		Streaming:  c.streaming.Load(),
		Forbidden:  c.forbidden.Load(),
	}
}

// trackedBody is a response body the counter can cut during a partition.
type trackedBody struct {
	io.ReadCloser
	owner *requestCounter
	// cutDone is set once the body was cut; reads then fail.
	cutDone atomic.Bool
	once    sync.Once
}

var errCut = errors.New("e2e partition: connection reset")

func (b *trackedBody) Read(p []byte) (int, error) {
	if b.cutDone.Load() {
		return 0, errCut
	}
	n, err := b.ReadCloser.Read(p)
	if err == nil && b.cutDone.Load() {
		return 0, errCut
	}
	return n, err
}

// cut makes reads fail and closes the underlying body, which unblocks a
// reader waiting on the stream.
func (b *trackedBody) cut() {
	b.cutDone.Store(true)
	_ = b.Close()
}

func (b *trackedBody) Close() error {
	var err error
	b.once.Do(func() {
		b.owner.mu.Lock()
		delete(b.owner.open, b)
		b.owner.mu.Unlock()
		err = b.ReadCloser.Close()
	})
	return err
}
