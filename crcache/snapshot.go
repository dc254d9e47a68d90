package crcache

import (
	"strings"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/ondemand"
)

// The decoders an informer's snapshot names (informer.Snapshot.Decoder),
// also the decoder label of its metrics.
const (
	// decoderRestsource: the cache's restsource Source lists and watches.
	decoderRestsource = "restsource"
	// decoderClient: controller-runtime's ListWatch lists and watches,
	// decoding with its client; the snapshot's DecoderReason says why.
	decoderClient = "controller-runtime"
)

// described is an informer of the cache whose snapshots carry what the
// cache knows of it: the resource, namespace and selectors the probe
// learnt, and which decoder serves it and why.
type described struct {
	informer.Snapshotter
	at              where
	decoder, reason string
	// onRead, for the metadata informer of an Options.OnRead type,
	// returns what its ondemand.Cache holds whole (nil until one is
	// built); nil for every other informer.
	onRead func() *ondemand.Stats
}

// Snapshot is the informer's, with the cache's knowledge filled in.
// Resource is group/version/resource as a factory's snapshots show it
// ("v1/pods" in the core group).
func (d described) Snapshot() informer.Snapshot {
	s := d.Snapshotter.Snapshot()
	if g := d.at.gvr; g.Resource != "" {
		s.GVR = g
		s.Resource = strings.TrimPrefix(g.Group+"/"+g.Version+"/"+g.Resource, "/")
	}
	s.Namespace, s.LabelSelector, s.FieldSelector = d.at.namespace, d.at.labelSelector, d.at.fieldSelector
	s.Decoder, s.DecoderReason = d.decoder, d.reason
	if d.onRead != nil {
		if st := d.onRead(); st != nil {
			s.OnRead = st.OnRead()
			s.Bytes += st.HeldBytes
		}
	}
	return s
}
