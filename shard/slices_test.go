package shard

import (
	"math/rand/v2"
	"testing"
)

func TestSliceBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 7, 1000, 1024, 4096, 65535, MaxSlices} {
		if got := sliceStart(0, n); got != 0 {
			t.Errorf("n=%d: slice 0 starts at %#x", n, got)
		}
		if got := sliceLast(n-1, n); got != ^uint64(0) {
			t.Errorf("n=%d: last slice ends at %#x", n, got)
		}
		check := func(i int) {
			start, last := sliceStart(i, n), sliceLast(i, n)
			if start > last {
				t.Fatalf("n=%d: slice %d is empty: [%#x, %#x]", n, i, start, last)
			}
			if got := sliceOf(start, n); got != i {
				t.Fatalf("n=%d: sliceOf(start of %d = %#x) = %d", n, i, start, got)
			}
			if got := sliceOf(last, n); got != i {
				t.Fatalf("n=%d: sliceOf(last of %d = %#x) = %d", n, i, last, got)
			}
			if i > 0 && sliceOf(start-1, n) != i-1 {
				t.Fatalf("n=%d: hash before slice %d is not in slice %d", n, i, i-1)
			}
		}
		if n <= 4096 {
			for i := range n {
				check(i)
			}
		} else {
			for range 4096 {
				check(r.IntN(n))
			}
		}
		for range 1000 {
			h := r.Uint64()
			s := sliceOf(h, n)
			if h < sliceStart(s, n) || h > sliceLast(s, n) {
				t.Fatalf("n=%d: %#x placed in slice %d = [%#x, %#x]", n, h, s, sliceStart(s, n), sliceLast(s, n))
			}
		}
	}
	// Powers of two cut on bit boundaries.
	if got := sliceStart(1, 1024); got != 1<<54 {
		t.Errorf("slice 1 of 1024 starts at %#x, want 1<<54", got)
	}
}

func TestCheckSlices(t *testing.T) {
	for _, tc := range []struct {
		in, want int
		ok       bool
	}{{0, DefaultSlices, true}, {1, 1, true}, {MaxSlices, MaxSlices, true}, {-1, 0, false}, {MaxSlices + 1, 0, false}} {
		got, err := checkSlices(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("checkSlices(%d) = %d, %v", tc.in, got, err)
		}
	}
}
