package cache

import (
	"k8s.io/client-go/tools/cache"

	_ "github.com/listwatch/listwatch/deltafifo" // sets dropin.NewDeltaFIFO
	"github.com/listwatch/listwatch/internal/dropin"
)

// NewDeltaFIFOWithOptions is client-go's cache.NewDeltaFIFOWithOptions on
// listwatch's FIFO engine (package deltafifo). It honours every field of
// opts (Logger, Name, KeyFunction, KnownObjects, EmitDeltaTypeReplaced,
// Transformer) with client-go's semantics: Pop hands the process function
// a cache.Deltas; deletions inferred by Replace carry a
// cache.DeletedFinalStateUnknown; with EmitDeltaTypeReplaced false,
// Replace queues Sync deltas; Pop returns cache.ErrFIFOClosed once closed
// and empty. The result also implements cache.QueueWithBatch,
// cache.TransformingStore and cache.DoneChecker.
//
// Known differences, all on error paths or inside process: a Replace with
// a bad object fails before queueing anything (client-go may queue part of
// the list); a failed Add/Update/Delete leaves HasSynced untouched; and
// HasSynced turns true after the last initial key has been processed
// rather than just before.
func NewDeltaFIFOWithOptions(opts cache.DeltaFIFOOptions) cache.Queue {
	return dropin.NewDeltaFIFO(opts)
}

// NewDeltaFIFO is client-go's deprecated cache.NewDeltaFIFO: a FIFO that
// queues Sync deltas on Replace; see NewDeltaFIFOWithOptions.
func NewDeltaFIFO(keyFunc cache.KeyFunc, knownObjects cache.KeyListerGetter) cache.Queue {
	return dropin.NewDeltaFIFO(cache.DeltaFIFOOptions{KeyFunction: keyFunc, KnownObjects: knownObjects})
}
