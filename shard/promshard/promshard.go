// Package promshard exports the state of shard ring members and sharded
// sources to Prometheus. A [Collector] reads [shard.Member.Status] and
// [shard.Source.Stats] when Prometheus scrapes, so nothing is counted on
// the members' or sources' paths.
//
//	c := promshard.New()
//	c.AddMember(member)
//	c.AddSource("pods", src)
//	registry.MustRegister(c)
//
// The families, labelled with the ring and the member (members) or the
// source's name (sources):
//
//	shard_ring_members{ring,member}                gauge    live members of the member's last assignment
//	shard_owned_slices{ring,member}                gauge    slices the member owns in it
//	shard_withheld_slices{ring,member}             gauge    owned slices not handed out yet: fenced handovers in progress
//	shard_ring_agreed{ring,member}                 gauge    1 when every live member announces the same assignment
//	shard_ring_synced{ring,member}                 gauge    1 once the ring's Leases were listed
//	shard_conflicting_members{ring,member}         gauge    live members announcing another slice count
//	shard_lease_renewed_timestamp_seconds{ring,member} gauge the member's last successful renewal
//	shard_lease_renew_failing{ring,member}         gauge    1 while the last renewal failed
//	shard_source_lists_total{source}               counter  list responses for an owning member
//	shard_source_server_filtered_lists_total{source} counter those the server filtered
//	shard_source_dropped_objects_total{source}     counter  listed objects the client filter dropped
//	shard_source_dropped_events_total{source}      counter  watch events the client filter dropped
//	shard_source_reassignments_total{source}       counter  changes of the member's part
//	shard_source_local_relists_total{source}       counter  relists served from the informer's cache
//	shard_source_confirm_lists_total{source}       counter  lists confirming slices handed over
//	shard_source_handover_deletions_total{source}  counter  deletions found by those, told by this member
//
// Objects per shard: a replica's part is its sharded informer's cache, which
// informer/promprovider exports as informer_cache_objects; shard.Census and
// shard.SliceCensus count a cache or a list per member or per slice.
//
// A Collector is safe for concurrent use: members and sources may be added
// while it is scraped.
package promshard

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/shard"
)

var (
	memberLabels = []string{"ring", "member"}
	sourceLabels = []string{"source"}

	descMembers    = prometheus.NewDesc("shard_ring_members", "Live members of the member's last assignment.", memberLabels, nil)
	descOwned      = prometheus.NewDesc("shard_owned_slices", "Slices the member owns in its last assignment.", memberLabels, nil)
	descWithheld   = prometheus.NewDesc("shard_withheld_slices", "Owned slices the member does not hand out yet (fenced handovers in progress).", memberLabels, nil)
	descAgreed     = prometheus.NewDesc("shard_ring_agreed", "1 when every live member announces the member's assignment.", memberLabels, nil)
	descSynced     = prometheus.NewDesc("shard_ring_synced", "1 once the ring's Leases were listed.", memberLabels, nil)
	descConflicts  = prometheus.NewDesc("shard_conflicting_members", "Live members that announce another slice count.", memberLabels, nil)
	descRenewed    = prometheus.NewDesc("shard_lease_renewed_timestamp_seconds", "Time of the member's last successful Lease renewal.", memberLabels, nil)
	descRenewFails = prometheus.NewDesc("shard_lease_renew_failing", "1 while the member's last Lease renewal failed.", memberLabels, nil)

	descLists          = prometheus.NewDesc("shard_source_lists_total", "List responses for an owning member.", sourceLabels, nil)
	descServerFiltered = prometheus.NewDesc("shard_source_server_filtered_lists_total", "List responses the server filtered with the shard selector.", sourceLabels, nil)
	descDroppedObjects = prometheus.NewDesc("shard_source_dropped_objects_total", "Listed objects the client-side filter dropped.", sourceLabels, nil)
	descDroppedEvents  = prometheus.NewDesc("shard_source_dropped_events_total", "Watch events the client-side filter dropped.", sourceLabels, nil)
	descReassignments  = prometheus.NewDesc("shard_source_reassignments_total", "Changes of the member's part.", sourceLabels, nil)
	descLocalRelists   = prometheus.NewDesc("shard_source_local_relists_total", "Relists served from the informer's cache (only gained slices listed from the server).", sourceLabels, nil)
	descConfirmLists   = prometheus.NewDesc("shard_source_confirm_lists_total", "Lists of slices handed over, confirming which of their objects still exist.", sourceLabels, nil)
	descHandoverDels   = prometheus.NewDesc("shard_source_handover_deletions_total", "Objects of slices handed over found deleted before their new owner listed them, told as deletions here.", sourceLabels, nil)
)

// Collector is a prometheus.Collector over members and sources.
type Collector struct {
	mu      sync.Mutex
	members []*shard.Member
	sources []namedSource
}

type namedSource struct {
	name string
	src  *shard.Source
}

// New returns a Collector with nothing to export yet.
func New() *Collector { return &Collector{} }

// AddMember exports m's Status, labelled with its ring and identity, which
// must be unique among the Collector's members.
func (c *Collector) AddMember(m *shard.Member) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.members = append(c.members, m)
}

// AddSource exports s's Stats labelled source=name, which must be unique
// among the Collector's sources.
func (c *Collector) AddSource(name string, s *shard.Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, namedSource{name, s})
}

// Describe sends every family's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMembers, descOwned, descWithheld, descAgreed, descSynced, descConflicts,
		descRenewed, descRenewFails, descLists, descServerFiltered, descDroppedObjects, descDroppedEvents, descReassignments,
		descLocalRelists, descConfirmLists, descHandoverDels} {
		ch <- d
	}
}

// Collect reads every member's Status and every source's Stats.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	members, sources := c.members, c.sources
	c.mu.Unlock()
	for _, m := range members {
		st := m.Status()
		lv := []string{m.Ring(), st.Identity}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
		}
		gauge(descMembers, float64(len(st.Members)))
		gauge(descOwned, float64(st.Owned))
		gauge(descWithheld, float64(st.Withheld))
		gauge(descAgreed, boolValue(st.Agreed))
		gauge(descSynced, boolValue(st.Synced))
		gauge(descConflicts, float64(len(st.Conflicts)))
		if !st.Renewed.IsZero() {
			gauge(descRenewed, float64(st.Renewed.UnixNano())/1e9)
		}
		gauge(descRenewFails, boolValue(st.RenewError != nil))
	}
	for _, s := range sources {
		st := s.src.Stats()
		counter := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), s.name)
		}
		counter(descLists, st.Lists)
		counter(descServerFiltered, st.ServerFiltered)
		counter(descDroppedObjects, st.DroppedObjects)
		counter(descDroppedEvents, st.DroppedEvents)
		counter(descReassignments, st.Reassignments)
		counter(descLocalRelists, st.LocalRelists)
		counter(descConfirmLists, st.ConfirmLists)
		counter(descHandoverDels, st.HandoverDeletions)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
