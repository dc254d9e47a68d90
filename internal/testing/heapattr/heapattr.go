// Package heapattr measures, in tests, what a heap profile attributes to
// the code under test: the live bytes allocated under frames of some
// packages and not under others (say, listwatch's, but not the fake
// server's that holds the server's copy of every object). Heap growth
// measured with runtime.MemStats counts everything the process allocated
// meanwhile; an attribution counts only what the code under test holds.
//
// # Usage
//
//	heapattr.Sample(t) // before the allocations to attribute
//	...
//	held := heapattr.Live(t, "github.com/listwatch/listwatch/", "github.com/listwatch/listwatch/fake")
//
// # Concurrency
//
// Sample changes runtime.MemProfileRate, a process-wide setting: tests
// that use it must not run in parallel with tests that read profiles.
//
// # Testing
//
// Used by the byte-accounting tests of ondemand and crcache, which hold
// Stats to within 15% of its figures.
package heapattr

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// Sample makes the heap profile record about every 256th byte allocated
// from now until the test ends (the default records one allocation per
// 512 KiB, too coarse for a few megabytes).
func Sample(t testing.TB) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 256
	t.Cleanup(func() { runtime.MemProfileRate = old })
}

// Live returns the live bytes, after two collections, of the heap
// profile's allocations with a frame whose function name starts with
// include ("" includes every allocation) and none whose name starts with
// exclude ("" excludes nothing).
func Live(t testing.TB, include, exclude string) int64 {
	t.Helper()
	runtime.GC()
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	inuse := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			inuse = i
		}
	}
	if inuse < 0 {
		t.Fatal("heapattr: the heap profile has no inuse_space")
	}
	var n int64
	for _, s := range p.Sample {
		in, out := false, false
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				name := l.Function.Name
				out = out || exclude != "" && strings.HasPrefix(name, exclude)
				in = in || strings.HasPrefix(name, include)
			}
		}
		if in && !out {
			n += s.Value[inuse]
		}
	}
	return n
}
