package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// listed is what go list says of one package.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	Export     string
	GoFiles    []string
	Deps       []string
	DepOnly    bool
	Module     *struct{ Path, Version string }
	Error      *struct{ Err string }
}

// handFiles is the hand-written part of one listwatch package.
type handFiles struct {
	files   []*ast.File
	names   map[string]bool // every top-level name, exported or not
	imports []string
}

// loader type-checks listwatch's covered packages from source (their
// hand-written files plus a freshly generated re-export file) and every
// other package from the compiler's export data.
type loader struct {
	root    string
	modPath string
	fset    *token.FileSet
	gc      types.Importer
	listed  map[string]*listed
	targets map[string]target // by listwatch import path
	hand    map[string]*handFiles
	done    map[string]*result // by listwatch import path
	busy    map[string]bool
}

// newLoader parses the hand-written files of targets and asks go list for
// the export data of client-go's packages and of everything the
// hand-written files import.
func newLoader(root string, ts []target) (*loader, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	l := &loader{
		root:    root,
		modPath: modPath,
		fset:    token.NewFileSet(),
		listed:  map[string]*listed{},
		targets: map[string]target{},
		hand:    map[string]*handFiles{},
		done:    map[string]*result{},
		busy:    map[string]bool{},
	}
	for _, t := range ts {
		l.targets[l.importPath(t)] = t
	}
	want := map[string]bool{}
	for _, t := range ts {
		want[t.Upstream] = true
		h, err := l.parseHand(t)
		if err != nil {
			return nil, err
		}
		l.hand[l.importPath(t)] = h
		for _, p := range h.imports {
			if _, ours := l.targets[p]; !ours && p != "C" && p != "unsafe" {
				want[p] = true
			}
		}
	}
	args := []string{"list", "-e", "-export", "-deps", "-json=ImportPath,Name,Dir,Export,GoFiles,Deps,DepOnly,Module,Error"}
	for p := range want {
		args = append(args, p)
	}
	slices.Sort(args[5:])
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.String())
	}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := new(listed)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		l.listed[p.ImportPath] = p
	}
	// A package read from export data that imports a covered package
	// would see the package as compiled on disk, not as generated here.
	for _, p := range l.listed {
		for _, d := range p.Deps {
			if _, ours := l.targets[d]; ours {
				return nil, fmt.Errorf("%s imports %s: a covered package may be imported only by covered packages", p.ImportPath, d)
			}
		}
	}
	l.gc = importer.ForCompiler(l.fset, "gc", func(path string) (io.ReadCloser, error) {
		p := l.listed[path]
		if p == nil {
			return nil, fmt.Errorf("go list did not report %s", path)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("%s does not build: %s", path, p.Error.Err)
		}
		if p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	return l, nil
}

// importPath is the import path of t's listwatch package.
func (l *loader) importPath(t target) string {
	return path.Join(l.modPath, filepath.ToSlash(t.Dir))
}

// parseHand parses the non-test .go files of t's directory, except the
// generated one, that the default build context would compile.
func (l *loader) parseHand(t target) (*handFiles, error) {
	h := &handFiles{names: map[string]bool{}}
	dir := filepath.Join(l.root, t.Dir)
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return h, nil
	}
	if err != nil {
		return nil, err
	}
	imports := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || n == generatedName {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		h.files = append(h.files, f)
		for _, d := range f.Decls {
			for _, n := range declNames(d) {
				h.names[n] = true
			}
		}
		for _, im := range f.Imports {
			imports[strings.Trim(im.Path.Value, `"`)] = true
		}
	}
	for p := range imports {
		h.imports = append(h.imports, p)
	}
	slices.Sort(h.imports)
	return h, nil
}

// declNames returns the package-level names a declaration declares
// (methods declare none).
func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil && d.Name.Name != "init" && d.Name.Name != "_" {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.Name != "_" {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

// Import implements types.Importer: covered packages from source (through
// load), everything else from export data.
func (l *loader) Import(path string) (*types.Package, error) {
	if _, ours := l.targets[path]; ours {
		r, err := l.load(path)
		if err != nil {
			return nil, err
		}
		return r.pkg, nil
	}
	return l.gc.Import(path)
}

// upstreamPkg is client-go's package and what its sources say beyond its
// export data.
type upstreamPkg struct {
	pkg     *types.Package
	version string // the module's
	// deprecated holds the names whose doc comment has a "Deprecated:"
	// paragraph.
	deprecated map[string]bool
	// callerSensitive holds the functions whose body asks for its caller's
	// location (which call it makes): a wrapper would be that caller.
	callerSensitive map[string]string
}

// callerAPIs are the calls by which a function looks at its caller: klog's
// and logr's call-depth helpers, testing's Helper, the runtime's.
var callerAPIs = map[string]bool{"WithCallStackHelper": true, "WithCallDepth": true, "Helper": true, "Caller": true, "Callers": true}

// upstream reads client-go's package: its types from export data, its
// deprecations and caller-sensitive functions from its sources.
func (l *loader) upstream(path string) (*upstreamPkg, error) {
	p := l.listed[path]
	if p == nil {
		return nil, fmt.Errorf("go list did not report %s", path)
	}
	pkg, err := l.gc.Import(path)
	if err != nil {
		return nil, err
	}
	u := &upstreamPkg{pkg: pkg, deprecated: map[string]bool{}, callerSensitive: map[string]string{}}
	if p.Module != nil {
		u.version = p.Module.Version
	}
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			markDeprecated(u.deprecated, d)
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok && callerAPIs[sel.Sel.Name] {
						u.callerSensitive[fd.Name.Name] = sel.Sel.Name
					}
					return true
				})
			}
		}
	}
	return u, nil
}

// markDeprecated records the names d declares whose doc comment has a
// "Deprecated:" paragraph.
func markDeprecated(m map[string]bool, d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil && isDeprecated(d.Doc) {
			m[d.Name.Name] = true
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			doc := d.Doc
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Doc != nil || len(d.Specs) > 1 {
					doc = s.Doc
				}
				if isDeprecated(doc) {
					m[s.Name.Name] = true
				}
			case *ast.ValueSpec:
				if s.Doc != nil || len(d.Specs) > 1 {
					doc = s.Doc
				}
				if isDeprecated(doc) {
					for _, n := range s.Names {
						m[n.Name] = true
					}
				}
			}
		}
	}
}

func isDeprecated(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, line := range strings.Split(doc.Text(), "\n") {
		if strings.HasPrefix(line, "Deprecated:") {
			return true
		}
	}
	return false
}

func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s/go.mod has no module line", root)
}
