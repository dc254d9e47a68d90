package informertest

import (
	"sync"
	"time"
)

// HeldProcessing is an informer.ProcessingObserver (Options.Processing)
// that can hold the informer's processing goroutine at the start of each
// batch, before the batch touches the cache: while held, what the
// reflector queues stays queued, as in an informer that has fallen behind.
// Inside a testing/synctest bubble a held batch is durably blocked. The
// zero value holds nothing.
type HeldProcessing struct {
	mu   sync.Mutex
	gate chan struct{} // non-nil while held; closed by Release
}

// Hold makes the next batches wait until Release.
func (h *HeldProcessing) Hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate == nil {
		h.gate = make(chan struct{})
	}
}

// Release lets the held batches, and every later one, go on.
func (h *HeldProcessing) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

// Observing waits while h is held; it never asks for times.
func (h *HeldProcessing) Observing() bool {
	h.mu.Lock()
	gate := h.gate
	h.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return false
}

// ObserveProcessing does nothing.
func (h *HeldProcessing) ObserveProcessing(time.Duration) {}
