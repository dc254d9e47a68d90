package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck runs the check on testdata/pkg/cases_test.go, whose lines
// marked "// want" (on the line itself or, for "(above", the line before)
// are the only ones to be reported; testdata directories and nested
// modules are skipped.
func TestCheck(t *testing.T) {
	findings, err := check("testdata")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "pkg", "cases_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{}
	for i, line := range strings.Split(string(src), "\n") {
		_, c, ok := strings.Cut(line, "// want")
		if !ok {
			continue
		}
		use := "t"
		if f := strings.Fields(c); len(f) > 0 && !strings.HasPrefix(f[0], "(") {
			use = f[0]
		}
		if strings.HasPrefix(strings.TrimSpace(c), "(above") {
			want[i] = use + ".Context()"
		} else {
			want[i+1] = use + ".Context()"
		}
	}
	got := map[int]string{}
	for _, f := range findings {
		if f.path != "pkg/cases_test.go" {
			t.Errorf("unexpected finding outside the cases: %v", f)
			continue
		}
		got[f.line] = f.use
	}
	for line, use := range want {
		if got[line] != use {
			t.Errorf("line %d: got %q, want %q", line, got[line], use)
		}
	}
	for line, use := range got {
		if _, ok := want[line]; !ok {
			t.Errorf("line %d: unexpected finding (%s)", line, use)
		}
	}
}

// TestAllowlist: a file's entry covers up to its count; beyond it every
// finding of the file is reported, and an entry that allows more than
// needed gets a note but does not fail.
func TestAllowlist(t *testing.T) {
	findings, err := check("testdata")
	if err != nil {
		t.Fatal(err)
	}
	n := len(findings)
	name := filepath.Join(t.TempDir(), "allow.txt")
	if err := os.WriteFile(name, []byte(allowlist(findings)), 0o644); err != nil {
		t.Fatal(err)
	}
	allow, err := readAllow(name)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if report(&out, findings, allow) || out.Len() != 0 {
		t.Fatalf("the written allowlist does not cover its findings:\n%s", out.String())
	}
	allow["pkg/cases_test.go"] = n - 1
	if !report(&out, findings, allow) || strings.Count(out.String(), "\n") != n {
		t.Fatalf("one too few allowed: want all %d findings reported, got:\n%s", n, out.String())
	}
	out.Reset()
	allow["pkg/cases_test.go"] = n + 1
	if report(&out, findings, allow) || !strings.Contains(out.String(), "note:") {
		t.Fatalf("one too many allowed: want a note only, got:\n%s", out.String())
	}
	if err := os.WriteFile(name, []byte("pkg/cases_test.go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readAllow(name); err == nil {
		t.Error("an entry without a count was accepted")
	}
}
