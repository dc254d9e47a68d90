package main

import (
	"slices"
	"testing"
)

// TestCheck runs the check on testdata/mod, a module whose package a links
// to what exists (in a, in b, and outside the module) and to five names
// that do not; the nested module is skipped.
func TestCheck(t *testing.T) {
	got, err := check("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a/a.go:1: [Bar.Missing] names nothing in example.com/mod/a",
		"a/a.go:1: [Gone] names nothing in example.com/mod/a",
		"a/a.go:1: [b.Gone] names nothing in example.com/mod/b",
		"a/a.go:1: [b.Thing.Gone] names nothing in example.com/mod/b",
		"a/a.go:8: [Nope] names nothing in example.com/mod/a",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
