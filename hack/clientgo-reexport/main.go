// Command clientgo-reexport writes clientgo/.../zz_generated.reexport.go:
// for each client-go package that listwatch's clientgo/ tree stands in for,
// every exported name of client-go's package that the listwatch package does
// not define in its own (hand-written) files, re-exported, so that code
// written against client-go's package compiles unchanged against listwatch's
// when only the import prefix k8s.io/client-go/ becomes
// github.com/listwatch/listwatch/clientgo/.
//
//	go run ./hack/clientgo-reexport         # rewrite the files (make clientgo-gen)
//	go run ./hack/clientgo-reexport -check  # exit 1 if a file is stale or a name is missing (make lint)
//	go run ./hack/clientgo-reexport -list   # print "dir import-path" per package (hack/peer)
//
// client-go is the version go.mod requires, read from the module cache (go
// list -export; it runs offline once the module cache and build cache hold
// client-go). How each kind of name is re-exported:
//
//   - types: aliases (generic types as generic aliases), so the methods,
//     the fields and the identity are client-go's;
//   - constants: constants of the same type and value;
//   - functions: wrappers with client-go's signature that call client-go's
//     function (generic functions as generic wrappers, variadic arguments
//     passed on with ...); deprecated ones stay deprecated. Two kinds are
//     held in a variable (var F = pkg.F) instead, listed in the header: a
//     function whose body looks at its caller (klog's WithCallStackHelper
//     or WithCallDepth, runtime.Caller: cache.WaitFor logs its caller's
//     source line, which a wrapper would replace with its own), and one
//     whose signature names an unexported type no other package can write;
//   - variables: a variable cannot be aliased. Each exported variable of a
//     covered package needs an entry in [varPolicies]: copied (var X =
//     pkg.X) where a copy is faithful (an error sentinel client-go never
//     reassigns: the copy holds the same value, so errors.Is and == match),
//     or not re-exported where it is not (a hook or setting users assign
//     to: assigning the copy would change nothing in client-go). The
//     generator fails on a variable without an entry.
//
// A name the listwatch package defines in its own files (any non-test .go
// file but the generated one) is not re-exported; instead its type is
// checked against client-go's: a function must have client-go's exact
// signature (or, only where the result is an interface of client-go's and
// listwatch's result implements it, an assignable one: reported in the
// generated header), a type must be identical (an alias) or, for an
// interface, have an identical method set, a constant the same type and
// value. One more kind is accepted, and reported as REPLACED: a type of
// listwatch's in place of a client-go struct type that has every one of
// its exported methods with the same signatures and each of its exported
// fields with an identical type; functions that return client-go's type
// may then return listwatch's (listwatch's queue for workqueue.Typed, its
// RetryWatcher, its DeltaFIFO, its Reflector). A declaration left to
// client-go that still names a replaced type (client-go's WatchErrorHandler
// takes client-go's *Reflector) fails the generation unless
// [conflictPolicies] decides it. Anything else fails the generation.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// target is one covered package: the directory of listwatch's package,
// relative to the module root, and client-go's import path.
type target struct {
	Dir      string
	Upstream string
}

// targets are the covered packages (issue 28). The informers ones are
// re-exported whole until their factories are written.
var targets = []target{
	{"clientgo/tools/cache", "k8s.io/client-go/tools/cache"},
	{"clientgo/tools/watch", "k8s.io/client-go/tools/watch"},
	{"clientgo/util/workqueue", "k8s.io/client-go/util/workqueue"},
	{"clientgo/informers", "k8s.io/client-go/informers"},
	{"clientgo/dynamic/dynamicinformer", "k8s.io/client-go/dynamic/dynamicinformer"},
	{"clientgo/metadata/metadatainformer", "k8s.io/client-go/metadata/metadatainformer"},
}

// generatedName is the file the generator owns in each package.
const generatedName = "zz_generated.reexport.go"

// command is how the generated files say they were made.
const command = "go run ./hack/clientgo-reexport (make clientgo-gen)"

func main() {
	check := flag.Bool("check", false, "check the generated files instead of writing them: exit 1 when one is stale or misses a name of client-go's")
	list := flag.Bool("list", false, "print each covered package as \"dir import-path\" and exit")
	flag.Parse()
	if *list {
		for _, t := range targets {
			fmt.Println(t.Dir, t.Upstream)
		}
		return
	}
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	results, err := run(root, targets)
	if err != nil {
		fail(err)
	}
	stale := false
	for _, r := range results {
		path := filepath.Join(root, r.Dir, generatedName)
		if !*check {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				fail(err)
			}
			if err := os.WriteFile(path, r.Source, 0o644); err != nil {
				fail(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fail(err)
		}
		if bytes.Equal(old, r.Source) {
			continue
		}
		stale = true
		fmt.Printf("%s/%s is out of date with %s@%s; run make clientgo-gen and commit it.\n",
			r.Dir, generatedName, r.Upstream, r.Version)
		if missing := r.missingFrom(old); len(missing) > 0 {
			fmt.Printf("  names client-go exports that the package lacks: %s\n", strings.Join(missing, ", "))
		}
	}
	for _, r := range results {
		for _, o := range r.Overrides {
			if o.Verdict != verdictIdentical {
				fmt.Fprintf(os.Stderr, "clientgo-reexport: %s.%s: %s\n", r.Dir, o.Name, o.Note)
			}
		}
	}
	if stale {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "clientgo-reexport:", err)
	os.Exit(2)
}

// moduleRoot is the directory of the main module.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not in a module")
	}
	return filepath.Dir(gomod), nil
}
