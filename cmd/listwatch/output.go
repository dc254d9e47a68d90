package main

import (
	"io"
	"sync"
)

// syncWriter serialises writes from the handler, status and fault
// goroutines, so each Write (one line) lands whole.
type syncWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func newSyncWriter(w io.Writer) *syncWriter { return &syncWriter{w: w} }

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
