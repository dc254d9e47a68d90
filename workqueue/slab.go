package workqueue

// slabChunkBits sets the slab's chunk size: 256 entries per chunk.
const (
	slabChunkBits = 8
	slabChunkMask = 1<<slabChunkBits - 1
)

// slab stores elements in fixed-size chunks, so growing it never copies or
// moves one (no memmove, no write barriers, stable pointers). Elements
// [0, n) exist; the free ones are listed in Typed.free.
type slab[E any] struct {
	chunks [][]E
	n      int32
}

// at returns element idx; idx must be below s.n.
func (s *slab[E]) at(idx int32) *E {
	return &s.chunks[idx>>slabChunkBits][idx&slabChunkMask]
}

// grow adds a zero element and returns its index.
func (s *slab[E]) grow() int32 {
	idx := s.n
	if int(idx>>slabChunkBits) == len(s.chunks) {
		s.chunks = append(s.chunks, make([]E, 1<<slabChunkBits))
	}
	s.n++
	return idx
}
