package main

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestCheckLoop: declarations needing names the package lacks are dropped
// (a test through a dropped helper too, its reason naming the helper and
// what the helper needed), imports they alone used are removed, and the
// rest is kept.
func TestCheckLoop(t *testing.T) {
	fset := token.NewFileSet()
	parse := func(name, src string) *ast.File {
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	own := parse("/p/own.go", `package p

type Store struct{ items map[string]int }

func NewStore() *Store { return &Store{} }
`)
	test := parse("/p/store_test.go", `package p

import (
	"strings"
	"testing"
)

// helper reads the unexported field of upstream's store, which the
// package under test lacks.
func helper(s *Store) int { return len(s.keys) }

func TestUsesHelper(t *testing.T) { _ = helper(NewStore()) }

// TestUnexported calls an unexported constructor of upstream's.
func TestUnexported(t *testing.T) { _ = newStoreWithClock(nil); _ = strings.ToUpper("x") }

// TestKept needs nothing unexported.
func TestKept(t *testing.T) {
	if NewStore() == nil {
		t.Fatal("nil")
	}
}
`)
	r := &rewriter{fset: fset, lw: t.TempDir()}
	p := &testPkg{name: "p"}
	tf := &testFile{name: "store_test.go", f: test}
	dropped := map[string]*drop{}
	imp := importer.ForCompiler(fset, "source", nil)
	_, drops, err := r.checkLoop(p, "example.com/p", []*ast.File{own}, []*testFile{tf}, imp, dropped)
	if err != nil {
		t.Fatal(err)
	}
	closeNeeds(drops, dropped)
	got := map[string]string{}
	for _, d := range drops {
		got[d.name] = d.reason()
	}
	want := map[string]string{
		"p.helper":         "needs Store.keys",
		"p.TestUsesHelper": "needs Store.keys; via dropped helper",
		"p.TestUnexported": "needs newStoreWithClock",
	}
	if len(got) != len(want) {
		t.Errorf("drops %v, want %v", got, want)
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: reason %q, want %q", n, got[n], w)
		}
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, test); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, gone := range []string{`"strings"`, "func helper", "TestUsesHelper", "TestUnexported", "upstream's store"} {
		if strings.Contains(out, gone) {
			t.Errorf("kept %q:\n%s", gone, out)
		}
	}
	for _, kept := range []string{`"testing"`, "func TestKept", "// TestKept needs nothing unexported."} {
		if !strings.Contains(out, kept) {
			t.Errorf("lost %q:\n%s", kept, out)
		}
	}
}

func TestIdentOf(t *testing.T) {
	for msg, want := range map[string]string{
		"undefined: newQueue": "newQueue",
		"f.items undefined (cannot refer to unexported field items)":                  ".items",
		"x.foo undefined (type *cache.DeltaFIFO has no field or method foo)":          "DeltaFIFO.foo",
		"cannot refer to unexported field keyFunc in struct literal of type RealFIFO": "RealFIFO.keyFunc",
		"cannot define new methods on non-local type DeltaFIFO":                       "DeltaFIFO (the test declares methods on it)",
		"cannot use x (variable of type int) as string value in argument to f":        "",
	} {
		if got := identOf(msg); got != want {
			t.Errorf("identOf(%q) = %q, want %q", msg, got, want)
		}
	}
}
