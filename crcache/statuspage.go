package crcache

import (
	"net/http"
	"sort"
	"sync"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/statuspage"
)

// StatusPage is informer/statuspage's page (HTML, or JSON on request)
// over the informers of the caches given it as [Options.StatusPage]: one
// row per informer with its sync state and the reason it has not synced,
// its last error, resource version, objects and handlers' lag; with
// [Options.MetricsRegisterer] set, its relists by cause too. Mount it on
// the manager's metrics server:
//
//	page := crcache.NewStatusPage(statuspage.Options{})
//	mgr, err := ctrl.NewManager(cfg, manager.Options{
//		NewCache: crcache.NewWithOptions(crcache.Options{StatusPage: page}),
//		Metrics:  metricsserver.Options{ExtraHandlers: map[string]http.Handler{"/informers": page}},
//	})
//
// It is safe for concurrent use.
type StatusPage struct {
	h  http.Handler
	mu sync.Mutex
	// caches are the builders of the caches shown, in creation order.
	caches []*builder
}

// NewStatusPage returns an empty StatusPage; opts.Relists, if not set,
// reads the caches' metrics.
func NewStatusPage(opts statuspage.Options) *StatusPage {
	p := &StatusPage{}
	if opts.Relists == nil {
		opts.Relists = p.relists
	}
	p.h = statuspage.Handler(p, opts)
	return p
}

// ServeHTTP serves the page.
func (p *StatusPage) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.h.ServeHTTP(w, r) }

// Snapshots implements statuspage.Source: a Snapshot of every informer
// of the caches, sorted by name.
func (p *StatusPage) Snapshots() []informer.Snapshot {
	var out []informer.Snapshot
	for _, b := range p.builders() {
		for _, s := range b.snapshotters() {
			out = append(out, s.Snapshot())
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (p *StatusPage) add(b *builder) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.caches = append(p.caches, b)
}

func (p *StatusPage) builders() []*builder {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*builder(nil), p.caches...)
}

// relists returns the relists by cause of the informer called name, from
// the metrics of the cache that has it.
func (p *StatusPage) relists(name string) map[string]int64 {
	for _, b := range p.builders() {
		if b.metrics != nil {
			if r := b.metrics.Relists(name); r != nil {
				return r
			}
		}
	}
	return nil
}
