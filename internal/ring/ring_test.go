package ring

import (
	"math/rand/v2"
	"testing"
)

// TestRingMatchesSlice drives the ring and a plain slice with the same
// random pushes, pops and reserves, through growth and shrinking, in both
// policies.
func TestRingMatchesSlice(t *testing.T) {
	for _, patient := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		r := Ring[int]{Patient: patient}
		var ref []int
		next := 0
		for step := range 200_000 {
			switch op := rng.IntN(100); {
			case op < 3:
				n := rng.IntN(5000)
				r.Reserve(n)
				if r.Cap() < r.Len()+n {
					t.Fatalf("patient=%v step %d: Reserve(%d) left room for %d", patient, step, n, r.Cap()-r.Len())
				}
			case op < 50 || (step/20_000)%2 == 0 && op < 70:
				r.Push(next)
				ref = append(ref, next)
				next++
			case len(ref) > 0:
				if *r.Peek() != ref[0] {
					t.Fatalf("patient=%v step %d: Peek = %d, want %d", patient, step, *r.Peek(), ref[0])
				}
				if got := r.Pop(); got != ref[0] {
					t.Fatalf("patient=%v step %d: Pop = %d, want %d", patient, step, got, ref[0])
				}
				ref = ref[1:]
			}
			if r.Len() != len(ref) {
				t.Fatalf("patient=%v step %d: Len = %d, want %d", patient, step, r.Len(), len(ref))
			}
			if len(ref) > 0 && *r.At(len(ref) - 1) != ref[len(ref)-1] {
				t.Fatalf("patient=%v step %d: tail differs", patient, step)
			}
		}
		for len(ref) > 0 {
			if got := r.Pop(); got != ref[0] {
				t.Fatalf("patient=%v drain: Pop = %d, want %d", patient, got, ref[0])
			}
			ref = ref[1:]
		}
		if !patient && r.Cap() > DefaultKeep {
			t.Fatalf("empty ring still holds %d slots", r.Cap())
		}
		for i := range 2 * r.Cap() { // steady traffic
			r.Push(i)
			r.Pop()
		}
		if r.Cap() > DefaultKeep {
			t.Fatalf("patient=%v: ring still holds %d slots under steady traffic", patient, r.Cap())
		}
	}
}

// A default ring gives a burst's memory back as it drains, down to Keep.
func TestRingShrinksAsItDrains(t *testing.T) {
	r := Ring[int]{Keep: 256}
	for i := range 10000 {
		r.Push(i)
	}
	peak := r.Cap()
	for i := range 10000 {
		if got := r.Pop(); got != i {
			t.Fatalf("Pop = %d, want %d", got, i)
		}
		if i == 9000 && r.Cap() >= peak {
			t.Fatalf("ring still %d slots with %d elements", r.Cap(), r.Len())
		}
	}
	if r.Cap() > 256 {
		t.Fatalf("buffer still %d slots after draining", r.Cap())
	}
	if r.Cap() < 256 {
		t.Fatalf("buffer shrank to %d slots, below Keep", r.Cap())
	}
}

// A patient ring keeps its buffer while a queue fills and drains again, and
// gives it back under steady low traffic.
func TestPatientRingKeepsItsBufferWhileRefilled(t *testing.T) {
	r := Ring[int]{Keep: 1024, Patient: true}
	for range 100_000 {
		r.Push(0)
	}
	size := r.Cap()
	for range 100_000 {
		r.Pop()
	}
	if r.Cap() != size {
		t.Fatalf("patient ring resized from %d to %d slots within one drain", size, r.Cap())
	}
	for range 300_000 { // steady low traffic after the burst
		r.Push(0)
		r.Pop()
	}
	if r.Cap() > 1024 {
		t.Fatalf("patient ring still holds %d slots after the burst", r.Cap())
	}
	// A ring that is refilled and drained resizes far less often than a
	// default one, which shrinks all the way down and grows back up every
	// cycle.
	cycles := func(r Ring[int]) (resizes int) {
		last := 0
		count := func() {
			if r.Cap() != last {
				resizes, last = resizes+1, r.Cap()
			}
		}
		for range 20 {
			for range 5000 {
				r.Push(0)
				count()
			}
			for range 5000 {
				r.Pop()
				count()
			}
		}
		return resizes
	}
	patient, eager := cycles(Ring[int]{Patient: true}), cycles(Ring[int]{})
	if patient*4 > eager {
		t.Fatalf("%d resizes over 20 fill-and-drain cycles of 5000, %d for a default ring", patient, eager)
	}
}

func TestRingReserveIsExact(t *testing.T) {
	var r Ring[int]
	r.Push(1)
	r.Reserve(1000)
	if r.Cap() != 1001 {
		t.Fatalf("Cap = %d after Reserve(1000) with one element, want 1001", r.Cap())
	}
	r.Reserve(1000) // room already
	if r.Cap() != 1001 {
		t.Fatalf("Cap = %d after a second Reserve", r.Cap())
	}
	for i := range 1000 {
		r.Push(i + 2)
	}
	if r.Cap() != 1001 || *r.At(1000) != 1001 {
		t.Fatalf("Cap = %d, last = %d", r.Cap(), *r.At(1000))
	}
}

func TestRingClearKeepsPolicy(t *testing.T) {
	r := Ring[*int]{Keep: 512, Patient: true}
	x := 1
	r.Push(&x)
	r.Clear()
	if r.Len() != 0 || r.Cap() != 0 || r.Keep != 512 || !r.Patient {
		t.Fatalf("after Clear: Len %d Cap %d Keep %d Patient %v", r.Len(), r.Cap(), r.Keep, r.Patient)
	}
}

// Popped slots hold the zero value, so that they pin no memory.
func TestRingZeroesPoppedSlots(t *testing.T) {
	var r Ring[*int]
	for i := range 10 {
		r.Push(&i)
	}
	for range 5 {
		r.Pop()
	}
	for i, p := range r.buf {
		live := (i-r.head+len(r.buf))%len(r.buf) < r.n
		if !live && p != nil {
			t.Fatalf("slot %d holds a popped element", i)
		}
	}
}

func TestRingSteadyTrafficDoesNotAllocate(t *testing.T) {
	for _, patient := range []bool{false, true} {
		r := Ring[int]{Patient: patient}
		for i := range 100 {
			r.Push(i)
		}
		if allocs := testing.AllocsPerRun(1000, func() { r.Push(1); r.Pop() }); allocs != 0 {
			t.Fatalf("patient=%v: %v allocations per push and pop", patient, allocs)
		}
	}
}

func BenchmarkPushPop(b *testing.B) {
	var r Ring[int]
	for i := range 64 {
		r.Push(i)
	}
	for i := 0; b.Loop(); i++ {
		r.Push(i)
		r.Pop()
	}
}

// Trim gives an empty ring's memory back whatever the policy, and leaves
// a ring holding elements, or one at its Keep size, as it is.
func TestTrim(t *testing.T) {
	r := Ring[int]{Keep: 16, Patient: true}
	for i := range 1000 {
		r.Push(i)
	}
	r.Trim()
	if r.Cap() < 1000 {
		t.Fatalf("a ring of %d elements trimmed to %d slots", r.Len(), r.Cap())
	}
	for r.Len() > 0 {
		r.Pop()
	}
	if r.Cap() < 1000 {
		t.Fatalf("the patient ring shrank to %d slots within its window", r.Cap())
	}
	r.Trim()
	if r.Cap() != 0 || r.Len() != 0 {
		t.Fatalf("after Trim: %d slots, %d elements; want none", r.Cap(), r.Len())
	}
	r.Push(7)
	if r.Pop() != 7 {
		t.Fatal("the trimmed ring lost its next element")
	}
	small := Ring[int]{Keep: 64}
	small.Push(1)
	small.Pop()
	before := small.Cap()
	small.Trim()
	if small.Cap() != before {
		t.Fatalf("a ring at its Keep size trimmed from %d to %d", before, small.Cap())
	}
}
