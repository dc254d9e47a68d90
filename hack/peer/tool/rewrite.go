package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// rewrite places client-go's own test files of the covered packages into
// listwatch's clientgo/ packages (a writable copy of the module), with only
// their imports of covered packages rewritten from k8s.io/client-go/... to
// listwatch's clientgo/...: an internal test (package cache) becomes part of
// listwatch's package, an external one (package cache_test) imports it.
// What does not type-check there, because it reads client-go's unexported
// production identifiers, is dropped a top-level declaration at a time
// (type-check with go/types, drop each declaration an error lies in,
// repeat until the package compiles); each dropped declaration is written
// to -dropped with the identifiers it needed. In the baseline mode the same
// files, after the same drops, go back into client-go's own packages (a
// writable copy of its module, -cgcopy) with their imports unchanged, which
// proves the harness: a failure in the listwatch mode is then listwatch's.
// The import paths to go test are written to -packages.
func rewrite(args []string) error {
	fs := flag.NewFlagSet("rewrite", flag.ExitOnError)
	mode := fs.String("mode", "listwatch", "listwatch or baseline")
	cg := fs.String("cg", "", "client-go's module directory (the module cache; read only)")
	lw := fs.String("lw", "", "a writable copy of the listwatch module")
	cgCopy := fs.String("cgcopy", "", "baseline: a writable copy of client-go's module")
	targetsFile := fs.String("targets", "", `covered packages, "dir import-path" a line (go run ./hack/clientgo-reexport -list)`)
	droppedOut := fs.String("dropped", "", "output: one line per dropped declaration, 'package.Name | file | reason'")
	pkgsOut := fs.String("packages", "", "output: the import paths to go test, one a line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cg == "" || *lw == "" || *targetsFile == "" || *droppedOut == "" || *pkgsOut == "" ||
		(*mode != "listwatch" && *mode != "baseline") || (*mode == "baseline") != (*cgCopy != "") {
		return fmt.Errorf("usage: rewrite -mode listwatch|baseline -cg DIR -lw DIR [-cgcopy DIR (baseline)] -targets FILE -dropped FILE -packages FILE")
	}
	modPath, err := goModPath(*lw)
	if err != nil {
		return err
	}
	pkgs, err := readTargets(*targetsFile, *cg, *lw, modPath)
	if err != nil {
		return err
	}
	r := &rewriter{fset: token.NewFileSet(), lw: *lw, modPath: modPath, upToLW: map[string]string{}}
	for _, p := range pkgs {
		r.upToLW[p.upstream] = p.lwPath
	}
	// 1. The test files, imports rewritten, in listwatch's packages, so
	// that go mod tidy sees their imports.
	for _, p := range pkgs {
		if err := r.place(p); err != nil {
			return err
		}
	}
	if err := goCmd(*lw, "mod", "tidy"); err != nil {
		return err
	}
	// 2. Export data of everything the packages and their tests import.
	if err := r.loadExports(pkgs); err != nil {
		return err
	}
	// 3. Drop what does not type-check, package by package.
	var drops []*drop
	for _, p := range pkgs {
		d, err := r.dropUntilClean(p)
		if err != nil {
			return err
		}
		drops = append(drops, d...)
	}
	// 4. Write the files where they run.
	var testPaths []string
	for _, p := range pkgs {
		if len(p.files) == 0 {
			continue
		}
		dir := filepath.Join(*lw, p.dir)
		testPath := p.lwPath
		if *mode == "baseline" {
			if err := removeTests(dir); err != nil { // the listwatch-mode copies
				return err
			}
			dir = filepath.Join(*cgCopy, p.rel)
			testPath = p.upstream
			if err := removeTests(dir); err != nil { // client-go's originals
				return err
			}
		}
		for _, tf := range p.files {
			if err := r.write(tf, filepath.Join(dir, tf.name), *mode == "baseline"); err != nil {
				return err
			}
		}
		testPaths = append(testPaths, testPath)
	}
	if err := os.WriteFile(*pkgsOut, []byte(strings.Join(testPaths, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Declarations of client-go's tests dropped by hack/peer/tool rewrite (they do not type-check against listwatch's packages).\n")
	for _, d := range drops {
		fmt.Fprintf(&b, "%s | %s | %s\n", d.name, d.file, d.reason())
	}
	return os.WriteFile(*droppedOut, b.Bytes(), 0o644)
}

// testPkg is one covered package with client-go tests.
type testPkg struct {
	dir      string // listwatch's directory, relative to the module root
	rel      string // client-go's directory, relative to its module root
	upstream string // client-go's import path
	lwPath   string // listwatch's import path
	name     string // the package name
	files    []*testFile
	pkg      *types.Package // the package with its internal tests
}

// testFile is one of client-go's test files.
type testFile struct {
	name     string // base name
	src      string // client-go's path, for messages
	f        *ast.File
	external bool
	orig     map[*ast.ImportSpec]string // rewritten imports: client-go's path
}

// drop is one dropped top-level declaration.
type drop struct {
	name   string // <package base>.<Name>
	file   string
	needs  []string // client-go identifiers it needs (through dropped helpers too, once closeNeeds ran)
	via    []string // dropped helpers it uses
	errors []string // errors naming no identifier
}

func (d drop) reason() string {
	var parts []string
	if len(d.needs) > 0 {
		parts = append(parts, "needs "+strings.Join(d.needs, ", "))
	}
	if len(d.via) > 0 {
		parts = append(parts, "via dropped "+strings.Join(d.via, ", "))
	}
	parts = append(parts, d.errors...)
	return strings.Join(parts, "; ")
}

type rewriter struct {
	fset    *token.FileSet
	lw      string
	modPath string
	upToLW  map[string]string // covered client-go import path -> listwatch's
	exports map[string]string // import path -> export data file
	gc      types.Importer
}

func readTargets(file, cg, lw, modPath string) ([]*testPkg, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*testPkg
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		dir, up, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			return nil, fmt.Errorf("%s: want 'dir import-path', got %q", file, line)
		}
		rel, ok := strings.CutPrefix(up, "k8s.io/client-go/")
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a client-go package", file, up)
		}
		p := &testPkg{dir: dir, rel: rel, upstream: up, lwPath: path.Join(modPath, dir), name: path.Base(up)}
		if _, err := os.Stat(filepath.Join(cg, rel)); err != nil {
			return nil, err
		}
		entries, err := os.ReadDir(filepath.Join(cg, rel))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if n := e.Name(); strings.HasSuffix(n, "_test.go") {
				if ok, err := build.Default.MatchFile(filepath.Join(cg, rel), n); err != nil || !ok {
					if err != nil {
						return nil, err
					}
					continue
				}
				p.files = append(p.files, &testFile{name: n, src: filepath.Join(cg, rel, n)})
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// place parses p's test files, rewrites their imports of covered packages
// and writes them into listwatch's package, whose own tests (if any) are
// removed first: the suite runs client-go's tests, not listwatch's.
func (r *rewriter) place(p *testPkg) error {
	dir := filepath.Join(r.lw, p.dir)
	if err := removeTests(dir); err != nil {
		return err
	}
	for _, tf := range p.files {
		f, err := parser.ParseFile(r.fset, tf.src, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		tf.f = f
		tf.external = f.Name.Name != p.name
		tf.orig = map[*ast.ImportSpec]string{}
		for _, im := range f.Imports {
			old, _ := strconv.Unquote(im.Path.Value)
			if nw, ok := r.upToLW[old]; ok {
				tf.orig[im] = old
				im.Path.Value = strconv.Quote(nw)
			}
		}
		if err := r.write(tf, filepath.Join(dir, tf.name), false); err != nil {
			return err
		}
	}
	return nil
}

// write prints tf to file, with client-go's import paths when original.
func (r *rewriter) write(tf *testFile, file string, original bool) error {
	if original {
		for im, old := range tf.orig {
			im.Path.Value = strconv.Quote(old)
		}
		defer func() {
			for im, old := range tf.orig {
				im.Path.Value = strconv.Quote(r.upToLW[old])
			}
		}()
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by hack/peer/tool rewrite from %s; DO NOT EDIT.\n\n", tf.src)
	if err := format.Node(&b, r.fset, tf.f); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

func removeTests(dir string) error {
	matches, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil {
			return err
		}
	}
	return nil
}

// loadExports asks go list, in the listwatch copy, for the export data of
// every package the covered packages and their tests import.
func (r *rewriter) loadExports(pkgs []*testPkg) error {
	want := map[string]bool{}
	for _, p := range pkgs {
		want[p.lwPath] = true
		for _, tf := range p.files {
			for _, im := range tf.f.Imports {
				ip, _ := strconv.Unquote(im.Path.Value)
				if ip != "C" && ip != "unsafe" {
					want[ip] = true
				}
			}
		}
	}
	args := []string{"list", "-e", "-export", "-deps", "-json=ImportPath,Export,Error"}
	for ip := range want {
		args = append(args, ip)
	}
	slices.Sort(args[5:])
	cmd := exec.Command("go", args...)
	cmd.Dir = r.lw
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list: %w\n%s", err, stderr.String())
	}
	r.exports = map[string]string{}
	errs := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath, Export string
			Error              *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		r.exports[p.ImportPath] = p.Export
		if p.Error != nil {
			errs[p.ImportPath] = p.Error.Err
		}
	}
	r.gc = importer.ForCompiler(r.fset, "gc", func(ip string) (io.ReadCloser, error) {
		if msg, bad := errs[ip]; bad {
			return nil, fmt.Errorf("%s does not build: %s", ip, msg)
		}
		file := r.exports[ip]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", ip)
		}
		return os.Open(file)
	})
	return nil
}

// importerFunc adapts a function to types.Importer.
type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(p string) (*types.Package, error) { return f(p) }

// dropUntilClean type-checks p with its internal tests, then its external
// tests, dropping what fails each time until both type-check.
func (r *rewriter) dropUntilClean(p *testPkg) ([]*drop, error) {
	if len(p.files) == 0 {
		return nil, nil
	}
	own, err := r.parseOwn(p)
	if err != nil {
		return nil, err
	}
	var internal, external []*testFile
	for _, tf := range p.files {
		if tf.external {
			external = append(external, tf)
		} else {
			internal = append(internal, tf)
		}
	}
	dropped := map[string]*drop{} // by declared name, for "via"
	var out []*drop
	pkg, d, err := r.checkLoop(p, p.lwPath, own, internal, r.gc, dropped)
	if err != nil {
		return nil, err
	}
	p.pkg = pkg
	out = append(out, d...)
	if len(external) > 0 {
		imp := importerFunc(func(ip string) (*types.Package, error) {
			if ip == p.lwPath {
				return p.pkg, nil
			}
			return r.gc.Import(ip)
		})
		_, d, err := r.checkLoop(p, p.lwPath+"_test", nil, external, imp, dropped)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	closeNeeds(out, dropped)
	return out, nil
}

// parseOwn parses listwatch's non-test files of p.
func (r *rewriter) parseOwn(p *testPkg) ([]*ast.File, error) {
	dir := filepath.Join(r.lw, p.dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*ast.File
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		f, err := parser.ParseFile(r.fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// checkLoop type-checks own + tests as package path until it is clean,
// dropping each top-level declaration of a test file an error lies in, and
// removing imports left unused.
func (r *rewriter) checkLoop(p *testPkg, pkgPath string, own []*ast.File, tests []*testFile, imp types.Importer, dropped map[string]*drop) (*types.Package, []*drop, error) {
	var out []*drop
	byFile := map[string]*testFile{}
	for _, tf := range tests {
		byFile[r.fset.Position(tf.f.Package).Filename] = tf
	}
	for round := 0; ; round++ {
		if round > 100 {
			return nil, nil, fmt.Errorf("%s: still failing after 100 rounds of drops", pkgPath)
		}
		files := slices.Clone(own)
		for _, tf := range tests {
			files = append(files, tf.f)
		}
		var errs []types.Error
		conf := types.Config{
			Importer:  imp,
			GoVersion: goVersionOf(r.lw),
			Error: func(err error) {
				if te, ok := err.(types.Error); ok && !strings.HasPrefix(te.Msg, "\t") {
					errs = append(errs, te)
				}
			},
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		pkg, _ := conf.Check(pkgPath, r.fset, files, info)
		if len(errs) == 0 {
			for _, tf := range tests {
				pruneComments(tf.f)
			}
			return pkg, out, nil
		}
		// Group this round's errors by declaration.
		type hit struct {
			tf   *testFile
			decl ast.Decl
			spec ast.Spec
			errs []types.Error
		}
		var hits []*hit
		find := func(tf *testFile, d ast.Decl, s ast.Spec) *hit {
			for _, h := range hits {
				if h.decl == d && h.spec == s {
					return h
				}
			}
			h := &hit{tf: tf, decl: d, spec: s}
			hits = append(hits, h)
			return h
		}
		for _, e := range errs {
			pos := r.fset.Position(e.Pos)
			tf := byFile[pos.Filename]
			if tf == nil {
				return nil, nil, fmt.Errorf("%s: an error outside client-go's test files (listwatch's own files?): %s", pkgPath, e)
			}
			d, s := enclosing(tf.f, e.Pos)
			if d == nil {
				return nil, nil, fmt.Errorf("%s: an error outside any declaration: %s", pkgPath, e)
			}
			h := find(tf, d, s)
			h.errs = append(h.errs, e)
		}
		// Register this round's drops first: a test may use a helper
		// dropped in the same round (a method declared on client-go's
		// type, which is then undefined).
		var round []*drop
		for _, h := range hits {
			if g, ok := h.decl.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				round = append(round, nil)
				continue
			}
			names := declaredNames(h.decl, h.spec)
			dr := &drop{name: p.name + "." + strings.Join(names, ","), file: h.tf.name}
			for _, n := range names {
				dropped[n] = dr
			}
			round = append(round, dr)
		}
		for i, h := range hits {
			dr := round[i]
			if dr == nil {
				removeSpec(h.tf.f, h.decl.(*ast.GenDecl), h.spec) // an import left unused by a drop
				continue
			}
			needs, via := map[string]bool{}, map[string]bool{}
			for _, e := range h.errs {
				id := identOf(e.Msg)
				if strings.HasPrefix(id, ".") { // x.f: name x's type
					if sel := selectorAt(h.tf.f, e.Pos); sel != nil {
						if t := info.TypeOf(sel.X); t != nil {
							id = shortType(types.TypeString(t, nil)) + id
						}
					}
				}
				switch {
				case id == "":
					msg := e.Msg
					if len(msg) > 160 {
						msg = msg[:157] + "..."
					}
					dr.errors = append(dr.errors, msg)
				case dropped[id] != nil && dropped[id] != dr:
					via[id] = true
				case dropped[id] == nil:
					needs[id] = true
				}
			}
			dr.needs, dr.via = sortedKeys(needs), sortedKeys(via)
			dr.errors = slices.Compact(dr.errors)
			if g, ok := h.decl.(*ast.GenDecl); ok && h.spec != nil && len(g.Specs) > 1 {
				removeSpec(h.tf.f, g, h.spec)
			} else {
				h.tf.f.Decls = slices.DeleteFunc(h.tf.f.Decls, func(d ast.Decl) bool { return d == h.decl })
			}
			out = append(out, dr)
		}
	}
}

// closeNeeds adds to each drop what the dropped helpers it uses need,
// transitively, so that a test's reason names client-go's identifiers.
func closeNeeds(drops []*drop, dropped map[string]*drop) {
	var needsOf func(d *drop, seen map[*drop]bool) []string
	needsOf = func(d *drop, seen map[*drop]bool) []string {
		if seen[d] {
			return nil
		}
		seen[d] = true
		out := slices.Clone(d.needs)
		for _, v := range d.via {
			out = append(out, needsOf(dropped[v], seen)...)
		}
		return out
	}
	all := map[*drop][]string{}
	for _, d := range drops {
		ns := needsOf(d, map[*drop]bool{})
		slices.Sort(ns)
		all[d] = slices.Compact(ns)
	}
	for _, d := range drops {
		d.needs = all[d]
	}
}

// enclosing returns the top-level declaration of f containing pos, and
// its spec when it is a GenDecl.
func enclosing(f *ast.File, pos token.Pos) (ast.Decl, ast.Spec) {
	for _, d := range f.Decls {
		if pos < d.Pos() || pos >= d.End() {
			continue
		}
		if g, ok := d.(*ast.GenDecl); ok {
			for _, s := range g.Specs {
				if pos >= s.Pos() && pos < s.End() {
					return d, s
				}
			}
		}
		return d, nil
	}
	return nil, nil
}

func removeSpec(f *ast.File, g *ast.GenDecl, s ast.Spec) {
	if s == nil {
		return
	}
	g.Specs = slices.DeleteFunc(g.Specs, func(x ast.Spec) bool { return x == s })
	if im, ok := s.(*ast.ImportSpec); ok {
		f.Imports = slices.DeleteFunc(f.Imports, func(x *ast.ImportSpec) bool { return x == im })
	}
	if len(g.Specs) == 0 {
		f.Decls = slices.DeleteFunc(f.Decls, func(d ast.Decl) bool { return d == g })
	}
}

// declaredNames names a declaration for the drop list: functions by name,
// methods as Type.Method, specs by their names.
func declaredNames(d ast.Decl, s ast.Spec) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			return []string{recvType(d.Recv.List[0].Type) + "." + d.Name.Name}
		}
		return []string{d.Name.Name}
	case *ast.GenDecl:
		specs := d.Specs
		if s != nil {
			specs = []ast.Spec{s}
		}
		var out []string
		for _, s := range specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
		return out
	}
	return []string{"?"}
}

// selectorAt returns the selector expression of f whose selected name is
// at pos (where go/types reports x.f undefined).
func selectorAt(f *ast.File, pos token.Pos) *ast.SelectorExpr {
	var found *ast.SelectorExpr
	ast.Inspect(f, func(n ast.Node) bool {
		if found != nil || n == nil || pos < n.Pos() || pos >= n.End() {
			return false
		}
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Pos() == pos {
			found = sel
			return false
		}
		return true
	})
	return found
}

var (
	reUndefined  = regexp.MustCompile(`^undefined: (\S+)$`)
	reUnexpSel   = regexp.MustCompile(`undefined \(cannot refer to unexported (?:field|method) (\w+)\)`)
	reNonLocal   = regexp.MustCompile(`^cannot define new methods on non-local type (\w+)`)
	reUnexpLit   = regexp.MustCompile(`^cannot refer to unexported field (\w+) in struct literal of type \*?(\S+)`)
	reNoMember   = regexp.MustCompile(`\(type \*?(\S+?) has no field or method (\w+)`)
	reUnknownFld = regexp.MustCompile(`unknown field (\w+) in struct literal of type \*?(\S+)`)
	reUnexported = regexp.MustCompile(`name (\w+) not exported by package (\w+)`)
	reRedeclared = regexp.MustCompile(`^(\w+) redeclared in this block`)
)

// identOf extracts the identifier a type error is about: an undefined
// name, a missing or unexported field or method (Type.name; ".name" when
// the message does not say the type), methods declared on a type of
// another package, a name declared twice.
func identOf(msg string) string {
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if m := reNoMember.FindStringSubmatch(msg); m != nil {
		return shortType(m[1]) + "." + m[2]
	}
	if m := reUnknownFld.FindStringSubmatch(msg); m != nil {
		return shortType(m[2]) + "." + m[1]
	}
	if m := reUnexported.FindStringSubmatch(msg); m != nil {
		return m[2] + "." + m[1]
	}
	if m := reUnexpSel.FindStringSubmatch(msg); m != nil {
		return "." + m[1] // the caller prefixes the type
	}
	if m := reUnexpLit.FindStringSubmatch(msg); m != nil {
		return shortType(m[2]) + "." + m[1]
	}
	if m := reNonLocal.FindStringSubmatch(msg); m != nil {
		return m[1] + " (the test declares methods on it)"
	}
	if m := reRedeclared.FindStringSubmatch(msg); m != nil {
		return m[1] + " (declared by the package too)"
	}
	return ""
}

// shortType drops package qualifiers and type arguments: T of *pkg.T[int].
func shortType(t string) string {
	t = strings.TrimPrefix(t, "*")
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	return t
}

// pruneComments keeps the comments of kept declarations (doc comments
// included) and those before the package clause; a dropped declaration's
// would float.
func pruneComments(f *ast.File) {
	var keep []*ast.CommentGroup
	for _, c := range f.Comments {
		if c.End() < f.Package {
			keep = append(keep, c)
			continue
		}
		for _, d := range f.Decls {
			start := d.Pos()
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Doc != nil {
					start = d.Doc.Pos()
				}
			case *ast.GenDecl:
				if d.Doc != nil {
					start = d.Doc.Pos()
				}
			}
			if c.Pos() >= start && c.End() <= d.End() {
				keep = append(keep, c)
				break
			}
		}
	}
	f.Comments = keep
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// goCmd runs go in dir, its output to stderr.
func goCmd(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func goModPath(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s/go.mod has no module line", dir)
}

// goVersionOf is the go directive of dir/go.mod, as go/types wants it.
func goVersionOf(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return "go" + strings.TrimSpace(v)
		}
	}
	return ""
}
