package shard

import (
	"fmt"
	"math/bits"
)

// DefaultSlices is the number of slices of the hash space when none is
// given: the most whose selectors stay under kube-apiserver's limit at
// every ring size (a member of a ring of two has about 1,000 ranges). The
// busiest member of a ring of 10 to 100 holds 1.1 to 1.35 times the mean;
// see docs/sharding.md for the balance at other sizes.
const DefaultSlices = 4096

// MaxSlices bounds the number of slices, so that an assignment stays a few
// megabytes and a selector a few thousand ranges at most.
const MaxSlices = 1 << 20

// checkSlices validates a slice count, 0 meaning DefaultSlices.
func checkSlices(n int) (int, error) {
	if n == 0 {
		return DefaultSlices, nil
	}
	if n < 1 || n > MaxSlices {
		return 0, fmt.Errorf("shard: %d slices: want 1 to %d", n, MaxSlices)
	}
	return n, nil
}

// sliceOf is the slice of n that holds hash h: floor(h·n / 2^64), so slice
// i holds the hashes from sliceStart(i, n) up to sliceStart(i+1, n)-1. For
// n a power of two it is the top log2(n) bits of h.
func sliceOf(h uint64, n int) int {
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// sliceStart is the first hash of slice i of n, ceil(i·2^64 / n), for
// 0 <= i < n. (The end of the last slice, 2^64, is not a uint64: ranges
// carry their last hash instead.)
func sliceStart(i, n int) uint64 {
	q, r := bits.Div64(uint64(i), 0, uint64(n))
	if r != 0 {
		q++
	}
	return q
}

// sliceLast is the last hash of slice i of n.
func sliceLast(i, n int) uint64 {
	if i == n-1 {
		return ^uint64(0)
	}
	return sliceStart(i+1, n) - 1
}
