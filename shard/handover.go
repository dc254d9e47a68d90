package shard

import (
	"slices"
	"strings"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// ListedAnnotation is the Lease annotation by which a member says that its
// Sources have listed everything it owns under an assignment, and from
// which resource version on they cover it: "<fingerprint>;<source>=<rv>;…"
// (one entry per SourceOptions.Name). A member that lost slices keeps them
// cached and watched until their new owner says so (docs/sharding.md,
// "Handover").
const ListedAnnotation = "listwatch.io/listed"

// listing is one member's ListedAnnotation: the assignment it has listed
// and, per source name, the resource version its list was at.
type listing struct {
	fingerprint string
	rvs         map[string]string
}

// String renders l as the annotation's value, names in order.
func (l listing) String() string {
	names := make([]string, 0, len(l.rvs))
	for n := range l.rvs {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(l.fingerprint)
	for _, n := range names {
		b.WriteString(";" + n + "=" + l.rvs[n])
	}
	return b.String()
}

// parseListing reads a ListedAnnotation; ok is false when there is none or
// it is malformed.
func parseListing(v string) (listing, bool) {
	parts := strings.Split(v, ";")
	if v == "" || parts[0] == "" {
		return listing{}, false
	}
	l := listing{fingerprint: parts[0], rvs: map[string]string{}}
	for _, p := range parts[1:] {
		i := strings.LastIndexByte(p, '=')
		if i < 0 {
			return listing{}, false
		}
		l.rvs[p[:i]] = p[i+1:]
	}
	return l, true
}

// listingOf reads the listing a Lease announces for its holder.
func listingOf(l *coordinationv1.Lease) (string, listing, bool) {
	if l.Spec.HolderIdentity == nil {
		return "", listing{}, false
	}
	li, ok := parseListing(l.Annotations[ListedAnnotation])
	return *l.Spec.HolderIdentity, li, ok
}

// handover is a Member's side of the handshake between the Sources it
// drives and its ring: its Sources report what they have listed, which the
// member announces on its Lease (ListedAnnotation); the member reports its
// peers' announcements, from which a Source learns when the new owner of a
// slice it lost has listed it. A Change carries it, so that a Source fed by
// a Member joins it at its first Update. Safe for concurrent use.
type handover struct {
	// wake asks the member's loop to write its Lease; never nil.
	wake func()

	mu sync.Mutex
	// sources are the Sources fed by the member, with what each has
	// listed: the fingerprint and resource version of its last complete
	// list ("" before one).
	sources map[*Source]listed
	// peers are the other members' announcements, by identity.
	peers map[string]listing
}

// listed is what one Source has listed.
type listed struct {
	fingerprint, rv string
}

func newHandover(wake func()) *handover {
	return &handover{wake: wake, sources: map[*Source]listed{}, peers: map[string]listing{}}
}

// join registers s; a Source joins at its first Update from the member.
func (h *handover) join(s *Source) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sources[s]; !ok {
		h.sources[s] = listed{}
	}
}

// listed records that s has listed everything the member owns under the
// assignment fingerprint, from resource version rv on, and wakes the
// member to announce it.
func (h *handover) listed(s *Source, fingerprint, rv string) {
	h.mu.Lock()
	h.sources[s] = listed{fingerprint: fingerprint, rv: rv}
	h.mu.Unlock()
	h.wake()
}

// announcement is the member's ListedAnnotation for its assignment
// fingerprint: set once every Source has listed it; "" until then, or
// when no Source has joined.
func (h *handover) announcement(fingerprint string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sources) == 0 {
		return ""
	}
	l := listing{fingerprint: fingerprint, rvs: map[string]string{}}
	for s, ld := range h.sources {
		if ld.fingerprint != fingerprint {
			return ""
		}
		if prev, ok := l.rvs[s.name]; !ok || laterRV(ld.rv, prev) {
			l.rvs[s.name] = ld.rv // of two sources of one name, the later
		}
	}
	return l.String()
}

// setPeers records the peers' announcements (self left out) and, when they
// changed, tells every Source.
func (h *handover) setPeers(peers map[string]listing) {
	h.mu.Lock()
	same := len(peers) == len(h.peers)
	for id, l := range peers {
		if old, ok := h.peers[id]; !ok || old.String() != l.String() {
			same = false
		}
	}
	var srcs []*Source
	if !same {
		h.peers = peers
		for s := range h.sources {
			srcs = append(srcs, s)
		}
	}
	h.mu.Unlock()
	for _, s := range srcs {
		s.peersChanged()
	}
}

// coverage says from which resource version on member covers, for the
// source named name, everything it owns under the assignment fingerprint;
// ok is false until it has announced that.
func (h *handover) coverage(member, fingerprint, name string) (rv string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, found := h.peers[member]
	if !found || l.fingerprint != fingerprint {
		return "", false
	}
	rv, ok = l.rvs[name]
	return rv, ok
}
