package cache

import (
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/deltafifo"
)

// DeltaFIFO is client-go's DeltaFIFO on listwatch's FIFO engine (package
// deltafifo): the same methods with client-go's semantics, and PopBatch.
// Code that names *cache.DeltaFIFO keeps compiling.
type DeltaFIFO struct{ q *deltafifo.DropIn }

var (
	_ cache.QueueWithBatch    = (*DeltaFIFO)(nil)
	_ cache.TransformingStore = (*DeltaFIFO)(nil)
	_ cache.DoneChecker       = (*DeltaFIFO)(nil)
)

// NewDeltaFIFOWithOptions is client-go's cache.NewDeltaFIFOWithOptions on
// listwatch's FIFO engine. It honours every field of opts (Logger, Name,
// KeyFunction, KnownObjects, EmitDeltaTypeReplaced, Transformer) with
// client-go's semantics: Pop hands the process function a cache.Deltas;
// deletions inferred by Replace carry a cache.DeletedFinalStateUnknown;
// with EmitDeltaTypeReplaced false, Replace queues Sync deltas; Pop
// returns cache.ErrFIFOClosed once closed and empty.
//
// Known differences, all on error paths or inside process: a Replace with
// a bad object fails before queueing anything (client-go may queue part of
// the list); a failed Add/Update/Delete leaves HasSynced untouched; and
// HasSynced turns true after the last initial key has been processed
// rather than just before.
func NewDeltaFIFOWithOptions(opts cache.DeltaFIFOOptions) *DeltaFIFO {
	return &DeltaFIFO{q: deltafifo.NewDropIn(opts)}
}

// NewDeltaFIFO is client-go's deprecated cache.NewDeltaFIFO: a FIFO that
// queues Sync deltas on Replace; see NewDeltaFIFOWithOptions.
func NewDeltaFIFO(keyFunc cache.KeyFunc, knownObjects cache.KeyListerGetter) *DeltaFIFO {
	return NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: keyFunc, KnownObjects: knownObjects})
}

func (f *DeltaFIFO) Add(obj any) error                             { return f.q.Add(obj) }
func (f *DeltaFIFO) Update(obj any) error                          { return f.q.Update(obj) }
func (f *DeltaFIFO) Delete(obj any) error                          { return f.q.Delete(obj) }
func (f *DeltaFIFO) Replace(list []any, rv string) error           { return f.q.Replace(list, rv) }
func (f *DeltaFIFO) Resync() error                                 { return f.q.Resync() }
func (f *DeltaFIFO) Pop(process cache.PopProcessFunc) (any, error) { return f.q.Pop(process) }
func (f *DeltaFIFO) HasSynced() bool                               { return f.q.HasSynced() }
func (f *DeltaFIFO) HasSyncedChecker() cache.DoneChecker           { return f.q.HasSyncedChecker() }
func (f *DeltaFIFO) Close()                                        { f.q.Close() }
func (f *DeltaFIFO) IsClosed() bool                                { return f.q.IsClosed() }
func (f *DeltaFIFO) Name() string                                  { return f.q.Name() }
func (f *DeltaFIFO) Done() <-chan struct{}                         { return f.q.Done() }
func (f *DeltaFIFO) KeyOf(obj any) (string, error)                 { return f.q.KeyOf(obj) }
func (f *DeltaFIFO) Transformer() cache.TransformFunc              { return f.q.Transformer() }

// PopBatch is cache.QueueWithBatch's: up to a batch of keys at once.
func (f *DeltaFIFO) PopBatch(processBatch cache.ProcessBatchFunc, processSingle cache.PopProcessFunc) error {
	return f.q.PopBatch(processBatch, processSingle)
}
