package shard

import "fmt"

// Range is a contiguous part of the hash space: the hashes from Start to
// Last, both included (Last rather than an exclusive end, so that the top
// of the space, 2^64-1, needs no 65th bit). Invariant: Start <= Last.
type Range struct {
	Start, Last uint64
}

// Contains reports whether h lies in r.
func (r Range) Contains(h uint64) bool { return r.Start <= h && h <= r.Last }

// startHex is r's inclusive start as a KEP-5866 bound: "0x" and 16
// lowercase hex digits.
func (r Range) startHex() string { return fmt.Sprintf("0x%016x", r.Start) }

// endHex is r's exclusive end as a KEP-5866 bound: Last+1 in 16 hex
// digits, or "0x10000000000000000" (2^64) for a range that reaches the top.
func (r Range) endHex() string {
	if r.Last == ^uint64(0) {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", r.Last+1)
}

// String renders r as the half-open interval a shard selector uses.
func (r Range) String() string { return "[" + r.startHex() + ", " + r.endHex() + ")" }

// rangesOf merges the sorted slice indexes owned (of n slices) into the
// fewest ranges: adjacent slices become one range.
func rangesOf(owned []int, n int) []Range {
	var out []Range
	for i := 0; i < len(owned); {
		j := i
		for j+1 < len(owned) && owned[j+1] == owned[j]+1 {
			j++
		}
		out = append(out, Range{Start: sliceStart(owned[i], n), Last: sliceLast(owned[j], n)})
		i = j + 1
	}
	return out
}
