package promprovider

import (
	"errors"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/reflector"
)

// Options configures New.
type Options struct {
	// Registerer receives the collector; nil means
	// prometheus.DefaultRegisterer. If a Provider is already registered
	// there, New returns that one.
	Registerer prometheus.Registerer
	// Now is the clock of the time to first sync; nil means time.Now.
	Now func() time.Time
}

// Provider is a prometheus.Collector over informers: at each scrape it
// reads every watched factory's and informer's Snapshot and every
// ReflectorMetrics it handed out. Nothing is recorded between scrapes
// except by ReflectorMetrics.
type Provider struct {
	now func() time.Time

	mu         sync.Mutex
	factories  []*factory.Factory
	informers  []single
	reflectors map[string]*ReflectorMetrics
}

type single struct {
	inf informer.Snapshotter
	gvr schema.GroupVersionResource
}

var _ prometheus.Collector = (*Provider)(nil)

// Register registers a Provider on reg (nil: prometheus.DefaultRegisterer)
// and adds f's informers to it, those handed out so far and later ones:
//
//	p, err := promprovider.Register(metrics.Registry, factory)
//
// The reflector counters of f's informers come with it (through
// [factory.Factory.Observe]); for an informer built without a
// factory, pass p.Reflector(name) as its Options.Reflector.Metrics.
// Calling Register again on the same registry adds f to the Provider
// already registered.
func Register(reg prometheus.Registerer, f *factory.Factory) (*Provider, error) {
	p, err := New(Options{Registerer: reg})
	if err != nil {
		return nil, err
	}
	if f != nil {
		p.AddFactory(f)
	}
	return p, nil
}

// New registers an empty Provider on opts.Registerer, or returns the one
// already registered there.
func New(opts Options) (*Provider, error) {
	reg := opts.Registerer
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	p := &Provider{now: now, reflectors: map[string]*ReflectorMetrics{}}
	if err := reg.Register(p); err != nil {
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(*Provider); ok {
				return existing, nil
			}
		}
		return nil, err
	}
	return p, nil
}

// AddFactory exports every informer f hands out, now or later. Informer
// names must be unique across everything a Provider exports.
func (p *Provider) AddFactory(f *factory.Factory) {
	p.mu.Lock()
	for _, g := range p.factories {
		if g == f {
			p.mu.Unlock()
			return
		}
	}
	p.factories = append(p.factories, f)
	p.mu.Unlock()
	// The factory's informers that have no reflector metrics of their own
	// count into p.Reflector(name), those built later included. Outside
	// p.mu: the factory calls back into p.Reflector under its own lock.
	f.Observe(func(name string) factory.Metrics { return p.Reflector(name) })
}

// AddInformer exports an informer built without a Factory, labelled with
// gvr (which may be zero).
func (p *Provider) AddInformer(inf informer.Snapshotter, gvr schema.GroupVersionResource) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.informers = append(p.informers, single{inf, gvr})
}

// Reflector returns the reflector.Metrics, which is also the
// informer.ProcessingObserver, for the informer called name (its
// Options.Name), the same one for the same name:
//
//	m := p.Reflector("pods")
//	informer.Options[*corev1.Pod]{Name: "pods", Reflector: reflector.Config[*corev1.Pod]{Metrics: m}, Processing: m}
//
// Its counters are exported with the labels of the informer of that name,
// or with empty group, version and resource if there is none.
func (p *Provider) Reflector(name string) *ReflectorMetrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.reflectors[name]
	if !ok {
		m = newReflectorMetrics(p.now)
		p.reflectors[name] = m
	}
	return m
}

// Relists returns the list cycles by cause of the informer called name,
// as counted by Reflector(name); nil if Reflector(name) was never called.
// It fits statuspage.Options.Relists.
func (p *Provider) Relists(name string) map[string]int64 {
	p.mu.Lock()
	m := p.reflectors[name]
	p.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.Relists()
}

// snapshots returns every exported informer's Snapshot and the reflector
// metrics, both sorted by name.
func (p *Provider) snapshots() ([]informer.Snapshot, []string, map[string]*ReflectorMetrics) {
	p.mu.Lock()
	factories := append([]*factory.Factory(nil), p.factories...)
	singles := append([]single(nil), p.informers...)
	refl := make(map[string]*ReflectorMetrics, len(p.reflectors))
	names := make([]string, 0, len(p.reflectors))
	for name, m := range p.reflectors {
		refl[name] = m
		names = append(names, name)
	}
	p.mu.Unlock()
	var snaps []informer.Snapshot
	for _, f := range factories {
		snaps = append(snaps, f.Snapshots()...)
	}
	for _, s := range singles {
		snap := s.inf.Snapshot()
		snap.GVR = s.gvr
		snaps = append(snaps, snap)
	}
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].Name < snaps[j].Name })
	sort.Strings(names)
	return snaps, names, refl
}

// Label names.
var (
	informerLabels = []string{"name", "group", "version", "resource"}
	handlerLabels  = append(append([]string(nil), informerLabels...), "handler")
)

func desc(name, help string, labels []string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string(nil), labels...), extra...), nil)
}

// The descriptors, by family. informer_queued_items,
// informer_processing_latency_seconds (with its buckets) and
// informer_store_resource_version are client-go's (KEP-4346), with its
// labels.
var (
	queuedItemsDesc = desc("informer_queued_items",
		"Number of items currently queued in the FIFO.", informerLabels)
	storeRVDesc = desc("informer_store_resource_version",
		"The 15 least significant digits of the resource version of the store.", informerLabels)
	objectsDesc = desc("informer_cache_objects",
		"Number of objects in the informer's cache.", informerLabels)
	bytesDesc = desc("informer_cache_bytes",
		"Estimated bytes of the cached objects, from a sample of them (store.Reader.Footprint).", informerLabels)
	indexValuesDesc = desc("informer_cache_index_values",
		"Distinct values of each index of the informer's cache.", informerLabels, "index")
	syncedDesc = desc("informer_synced",
		"1 once the informer's first list has been processed, else 0.", informerLabels)
	droppedDesc = desc("informer_dropped_objects_total",
		"Objects not cached because the transform failed or returned nil, or of an unexpected type.", informerLabels)
	decoderDesc = desc("informer_decoder_info",
		"1 with what decodes the informer's objects (Snapshot.Decoder), when told; absent otherwise.", informerLabels, "decoder")
	phaseDesc = desc("informer_reflector_phase",
		"1 for the reflector's current phase, 0 for the others.", informerLabels, "phase")
	failuresDesc = desc("informer_reflector_consecutive_failures",
		"Failed list or watch attempts since the last success.", informerLabels)
	lastErrorDesc = desc("informer_reflector_last_error",
		"1 with the reason of the reflector's last error while it has one; absent otherwise.", informerLabels, "reason")
	staleDesc = desc("informer_stale",
		"1 while the informer is stale (informer.Freshness.Stale: a Fresh call outlasted Options.FreshnessBound), else 0.", informerLabels)
	behindDesc = desc("informer_behind_resource_versions",
		"How far the cache's resource version is behind the server's that the last Fresh call learnt (informer.Freshness.BehindBy); absent before the first.", informerLabels)

	listsDesc = desc("informer_reflector_lists_total",
		"List requests made (pages).", informerLabels)
	watchesDesc = desc("informer_reflector_watches_total",
		"Watch requests made, streaming lists included.", informerLabels)
	relistsDesc = desc("informer_reflector_relists_total",
		"List cycles started, by cause; None is the first list.", informerLabels, "cause")
	errorsDesc = desc("informer_reflector_errors_total",
		"Errors met by the reflector, by reason.", informerLabels, "reason")
	eventsDesc = desc("informer_reflector_watch_events_total",
		"Watch events received, by type.", informerLabels, "type")
	processingDesc = desc("informer_processing_latency_seconds",
		"Time taken to process events after popping from the queue.", informerLabels)
	firstSyncDesc = desc("informer_reflector_first_sync_seconds",
		"Time from the start of the first list to its hand-over to the store; absent until then.", informerLabels)

	pendingDesc = desc("informer_handler_pending",
		"Keys (Coalesce) or notifications (InOrder) waiting for the handler.", handlerLabels)
	oldestDesc = desc("informer_handler_oldest_pending_seconds",
		"How long the handler's oldest pending entry has waited.", handlerLabels)
	busyDesc = desc("informer_handler_busy_seconds",
		"How long the handler has been running without a break; 0 when idle.", handlerLabels)
	processedDesc = desc("informer_handler_processed_total",
		"Handler calls made, including ones that panicked.", handlerLabels)
	coalescedDesc = desc("informer_handler_coalesced_total",
		"Notifications folded into an entry already pending.", handlerLabels)
	panicsDesc = desc("informer_handler_panics_total",
		"Handler calls that panicked.", handlerLabels)
	handlerTimeDesc = desc("informer_handler_duration_seconds_total",
		"Total time spent in the handler.", handlerLabels)
	handlerSyncedDesc = desc("informer_handler_synced",
		"1 once the handler has been handed the whole initial list, else 0.", handlerLabels)
)

var allDescs = []*prometheus.Desc{
	queuedItemsDesc, storeRVDesc, objectsDesc, bytesDesc, indexValuesDesc, syncedDesc, droppedDesc, decoderDesc, phaseDesc, failuresDesc, lastErrorDesc, staleDesc, behindDesc,
	listsDesc, watchesDesc, relistsDesc, errorsDesc, eventsDesc, firstSyncDesc, processingDesc,
	pendingDesc, oldestDesc, busyDesc, processedDesc, coalescedDesc, panicsDesc, handlerTimeDesc, handlerSyncedDesc,
}

// phases are the reflector's phases, in order.
var phases = []reflector.Phase{reflector.PhaseListing, reflector.PhaseStreaming, reflector.PhaseWatching,
	reflector.PhaseBackoff, reflector.PhaseStopped}

// Describe implements prometheus.Collector.
func (p *Provider) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (p *Provider) Collect(ch chan<- prometheus.Metric) {
	snaps, names, refl := p.snapshots()
	labelsOf := make(map[string][]string, len(snaps))
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, s := range snaps {
		l := []string{s.Name, s.GVR.Group, s.GVR.Version, s.GVR.Resource}
		labelsOf[s.Name] = l
		gauge(queuedItemsDesc, float64(s.Queued), l...)
		if rv, ok := rvValue(s.Status.LastSyncResourceVersion); ok {
			gauge(storeRVDesc, rv, l...)
		}
		gauge(objectsDesc, float64(s.Objects), l...)
		gauge(bytesDesc, float64(s.Bytes), l...)
		for index, n := range s.IndexValues {
			gauge(indexValuesDesc, float64(n), with(l, index)...)
		}
		gauge(syncedDesc, boolValue(s.Synced), l...)
		counter(droppedDesc, float64(s.Dropped), l...)
		if s.Decoder != "" {
			gauge(decoderDesc, 1, with(l, s.Decoder)...)
		}
		for _, ph := range phases {
			gauge(phaseDesc, boolValue(s.Status.Phase == ph), with(l, ph.String())...)
		}
		gauge(failuresDesc, float64(s.Status.Failures), l...)
		if s.Status.LastError != nil {
			gauge(lastErrorDesc, 1, with(l, s.Status.Reason.String())...)
		}
		gauge(staleDesc, boolValue(s.Freshness.Stale), l...)
		if s.Freshness.ServerResourceVersion != "" {
			gauge(behindDesc, float64(s.Freshness.BehindBy), l...)
		}
		for _, h := range s.Handlers {
			hl := with(l, h.Name)
			st := h.Stats
			gauge(pendingDesc, float64(st.Pending), hl...)
			gauge(oldestDesc, st.OldestPending.Seconds(), hl...)
			gauge(busyDesc, st.Busy.Seconds(), hl...)
			counter(processedDesc, float64(st.Processed), hl...)
			counter(coalescedDesc, float64(st.Coalesced), hl...)
			counter(panicsDesc, float64(st.Panics), hl...)
			counter(handlerTimeDesc, st.HandlerTime.Seconds(), hl...)
			gauge(handlerSyncedDesc, boolValue(h.Synced), hl...)
		}
	}
	for _, name := range names {
		m := refl[name]
		l, ok := labelsOf[name]
		if !ok {
			l = []string{name, "", "", ""}
		}
		counter(listsDesc, float64(m.lists.Load()), l...)
		counter(watchesDesc, float64(m.watches.Load()), l...)
		for r := range numReasons {
			reason := reflector.Reason(r).String()
			counter(relistsDesc, float64(m.relists[r].Load()), with(l, reason)...)
			if r != int(reflector.ReasonNone) {
				counter(errorsDesc, float64(m.errors[r].Load()), with(l, reason)...)
			}
		}
		for i, t := range eventTypes {
			counter(eventsDesc, float64(m.events[i].Load()), with(l, string(t))...)
		}
		if d := m.firstSync.Load(); d >= 0 {
			gauge(firstSyncDesc, time.Duration(d).Seconds(), l...)
		}
		if n, sum, buckets := m.processing.snapshot(); n > 0 {
			ch <- prometheus.MustNewConstHistogram(processingDesc, n, sum, buckets, l...)
		}
	}
}

// with returns labels followed by extra, in a new slice.
func with(labels []string, extra ...string) []string {
	return append(append(make([]string, 0, len(labels)+len(extra)), labels...), extra...)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// rvValue returns the 15 least significant digits of a numeric resource
// version, as client-go's informer_store_resource_version does (a float64
// holds 15 decimal digits exactly).
func rvValue(rv string) (float64, bool) {
	if rv == "" {
		return 0, false
	}
	for _, c := range rv {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	return float64(v), err == nil
}
