package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPIUpToDate: api.txt is what the code exports (make lint checks the
// same; make api-update rewrites it).
func TestAPIUpToDate(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	got, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "hack", "api", "api.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("hack/api/api.txt is out of date; if the change is meant, run make api-update:\n%s", d)
	}
}

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
		"retrywatcher: type Backoff = github.com/listwatch/listwatch/reflector.Backoff\n",
		"retrywatcher: type Input interface, has unexported methods\n",
		"reflector: type BackoffConfig = Backoff\n",
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
