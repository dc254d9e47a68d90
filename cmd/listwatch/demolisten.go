package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/informer/promprovider"
	"github.com/listwatch/listwatch/informer/statuspage"
	"github.com/listwatch/listwatch/reflector"
	wqprom "github.com/listwatch/listwatch/workqueue/promprovider"
)

// observer serves the demo's status page at / and its Prometheus metrics
// at /metrics (demo --listen): the informers' and the controller's work
// queue's. The demo's informer is built through its factory so that both
// see it.
type observer struct {
	f   *factory.Factory
	p   *promprovider.Provider
	wq  *wqprom.Provider
	srv *http.Server
	url string
	wg  sync.WaitGroup
}

// listen binds addr and starts serving; the caller must call close.
func listen(ctx context.Context, addr string, log io.Writer) (*observer, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o := &observer{f: factory.New(factory.Options{})}
	var err error
	if o.p, err = promprovider.Register(reg, o.f); err != nil {
		return nil, err
	}
	if o.wq, err = wqprom.New(wqprom.Options{Registerer: reg}); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /{$}", statuspage.Handler(o.f, statuspage.Options{Title: "listwatch demo", Relists: o.p.Relists}))
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	o.url = "http://" + ln.Addr().String() + "/"
	o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	o.wg.Go(func() {
		if err := o.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(log, "status page: %v\n", err)
		}
	})
	return o, nil
}

// close stops the server, waiting briefly for requests in progress.
func (o *observer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if o.srv.Shutdown(ctx) != nil {
		o.srv.Close()
	}
	o.wg.Wait()
}

// teeMetrics hands every reflector count to two Metrics.
type teeMetrics [2]reflector.Metrics

func (t teeMetrics) List()                         { t[0].List(); t[1].List() }
func (t teeMetrics) Watch()                        { t[0].Watch(); t[1].Watch() }
func (t teeMetrics) Relist(cause reflector.Reason) { t[0].Relist(cause); t[1].Relist(cause) }
func (t teeMetrics) Event(e watch.EventType)       { t[0].Event(e); t[1].Event(e) }
func (t teeMetrics) Error(class reflector.Reason)  { t[0].Error(class); t[1].Error(class) }
func (t teeMetrics) ResourceVersion(rv string)     { t[0].ResourceVersion(rv); t[1].ResourceVersion(rv) }
