package shard

import (
	"fmt"
	"testing"
)

func benchMembers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("controller-%d", i)
	}
	return out
}

func BenchmarkAssign1000x1024(b *testing.B) {
	ms := benchMembers(1000)
	for b.Loop() {
		MustAssign(ms, Options{})
	}
}

func BenchmarkWith1000x1024(b *testing.B) {
	a := MustAssign(benchMembers(1000), Options{})
	for b.Loop() {
		if _, err := a.With("newcomer"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWithout1000x1024(b *testing.B) {
	a := MustAssign(benchMembers(1000), Options{})
	for b.Loop() {
		a.Without("controller-7")
	}
}

func BenchmarkMatcherOwnsKey(b *testing.B) {
	m, _ := MustAssign(benchMembers(10), Options{}).Matcher("controller-3", FieldUID)
	key := "0b5c1f7e-6a3d-4f5e-9c2b-8d7a6e5f4c3b"
	for b.Loop() {
		m.OwnsKey(key)
	}
}
