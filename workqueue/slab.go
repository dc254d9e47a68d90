package workqueue

// slabChunkBits sets the slab's chunk size: 256 entries per chunk.
const (
	slabChunkBits = 8
	slabChunkMask = 1<<slabChunkBits - 1
)

// slab stores entries in fixed-size chunks, so growing it never copies or
// moves an entry (no memmove, no write barriers, stable pointers).
// Entries [0, n) exist; the free ones are listed in Typed.free.
type slab[T comparable] struct {
	chunks [][]entry[T]
	n      int32
}

// at returns entry idx; idx must be below s.n.
func (s *slab[T]) at(idx int32) *entry[T] {
	return &s.chunks[idx>>slabChunkBits][idx&slabChunkMask]
}

// grow adds a zero entry and returns its index.
func (s *slab[T]) grow() int32 {
	idx := s.n
	if int(idx>>slabChunkBits) == len(s.chunks) {
		s.chunks = append(s.chunks, make([]entry[T], 1<<slabChunkBits))
	}
	s.n++
	return idx
}
