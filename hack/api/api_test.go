package main

import (
	"strings"
	"testing"
)

// Whether api.txt is up to date is checked by make lint (make api-check),
// not by a test: make unit should not fail while an API change is in
// progress.

// TestDiff: lines only in the old text are "-", only in the new "+", and
// repeated lines count.
func TestDiff(t *testing.T) {
	got := diff([]byte("a\nb\nb\nc\n"), []byte("a\nb\nc\nd\n"))
	if want := "- b\n+ d\n"; got != want {
		t.Errorf("diff = %q, want %q", got, want)
	}
	if got := diff([]byte("x\n"), []byte("x\n")); got != "" {
		t.Errorf("diff of equal texts = %q", got)
	}
}

// TestRenderedShapes spot-checks the rendering on this module's own
// packages: parameter names are left out, aliases, embedded fields,
// sealed interfaces and receivers are shown.
func TestRenderedShapes(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	text, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"retrywatcher: method (*Machine) Step(time.Time, Input) []Effect\n",
		"retrywatcher: type Options struct\n",
		"retrywatcher: type Input interface, has unexported methods\n",
		"reflector: type Backoff struct\n",
		"reflector: method (Backoff) Delay(int, *math/rand/v2.Rand) time.Duration\n",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("api text lacks %q", want)
		}
	}
	for _, skipped := range []string{"\ninternal/", "\nexamples/", "\ntest/", "\nbench: "} {
		if strings.Contains(string(text), skipped) {
			t.Errorf("a package outside the library is rendered (%q)", skipped[1:])
		}
	}
}
