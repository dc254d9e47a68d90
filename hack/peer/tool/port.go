package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
)

// port rewrites one of a peer's test files so that it compiles as part of
// another package: the package clause is renamed, the original package may
// be dot-imported (for internal tests), functions needing the peer's
// internals are dropped, constructors are renamed to the harness's shims,
// and type assertions to an unexported concrete type are turned into
// assertions to an interface. Imports left unused are removed.
func port(args []string) error {
	fs := flag.NewFlagSet("port", flag.ExitOnError)
	out := fs.String("o", "", "output file")
	pkg := fs.String("pkg", "", "new package name")
	dot := fs.String("dot", "", "import path to dot-import (the package an internal test belonged to)")
	rename := fs.String("rename", "", "comma-separated old=new; old is an identifier (unqualified use) or pkg.Name (qualified use)")
	drop := fs.String("drop", "", "comma-separated names of functions, methods (Type.Method) and types to drop")
	assert := fs.String("assert", "", "comma-separated from=to: x.(*from) becomes x.(to)")
	unassign := fs.String("unassign", "", "comma-separated selectors (x.f, x.y.f): assignment statements to them are dropped, e.g. a peer's fake clock set into its unexported fields")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" || *pkg == "" {
		return fmt.Errorf("usage: port -o out.go -pkg name [-dot path] [-rename a=b,...] [-drop f,...] [-assert a=b,...] [-unassign x.f,...] in.go")
	}
	in := fs.Arg(0)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, in, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	f.Name.Name = *pkg

	drops := set(*drop)
	var decls []ast.Decl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recvType(d.Recv.List[0].Type) + "." + name
			}
			if drops[name] {
				delete(drops, name)
				continue
			}
		case *ast.GenDecl:
			if d.Tok == token.TYPE {
				var specs []ast.Spec
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					if drops[ts.Name.Name] {
						delete(drops, ts.Name.Name)
						continue
					}
					specs = append(specs, s)
				}
				if len(specs) == 0 {
					continue
				}
				d.Specs = specs
			}
		}
		decls = append(decls, d)
	}
	f.Decls = decls
	if len(drops) > 0 {
		return fmt.Errorf("%s: -drop names not found (stale exclusion list?): %v", in, keys(drops))
	}
	// Comments of dropped declarations would be left floating; keep only
	// those inside kept declarations, plus the file header.
	var comments []*ast.CommentGroup
	for _, c := range f.Comments {
		if c.End() < f.Package {
			comments = append(comments, c)
			continue
		}
		for _, d := range f.Decls {
			if c.Pos() >= d.Pos() && c.End() <= d.End() {
				comments = append(comments, c)
				break
			}
		}
	}
	f.Comments = comments

	unq, qual := map[string]string{}, map[string]string{}
	for old, nw := range pairs(*rename) {
		if p, n, ok := strings.Cut(old, "."); ok {
			qual[p+"."+n] = nw
		} else {
			unq[old] = nw
		}
	}
	asserts := pairs(*assert)
	renamed := map[string]bool{}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if nw, ok := qual[x.Name+"."+n.Sel.Name]; ok {
					renamed[x.Name+"."+n.Sel.Name] = true
					x.Name = nw
					n.Sel = nil
					return false
				}
			}
			if n.Sel != nil {
				ast.Inspect(n.X, visit)
				return false
			}
		case *ast.TypeAssertExpr:
			if st, ok := n.Type.(*ast.StarExpr); ok {
				if id, ok := st.X.(*ast.Ident); ok {
					if to, ok := asserts[id.Name]; ok {
						renamed["*"+id.Name] = true
						n.Type = ast.NewIdent(to)
					}
				}
			}
		case *ast.KeyValueExpr:
			// A field name in a composite literal is not a reference (a
			// map key expression is, but never a constructor name).
			if _, ok := n.Key.(*ast.Ident); !ok {
				ast.Inspect(n.Key, visit)
			}
			ast.Inspect(n.Value, visit)
			return false
		default:
			renameIdent(n, unq, renamed)
		}
		return true
	}
	ast.Inspect(f, visit)
	var stale []string
	for old := range pairs(*rename) {
		if !renamed[old] {
			stale = append(stale, old)
		}
	}
	for from := range asserts {
		if !renamed["*"+from] {
			stale = append(stale, "*"+from)
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%s: -rename/-assert names not found (stale list?): %v", in, stale)
	}
	if err := dropAssignments(f, set(*unassign)); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	// A SelectorExpr whose Sel was cleared stands for the renamed identifier
	// alone; replace it in place by printing and re-parsing is overkill, so
	// patch the parents.
	replaceClearedSelectors(f)

	if *dot != "" {
		addImport(f, ".", *dot)
	}
	if err := removeUnusedImports(f); err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "// Code generated by hack/peer/tool port from %s; DO NOT EDIT.\n\n", in)
	if err := format.Node(&buf, fset, f); err != nil {
		return err
	}
	return os.WriteFile(*out, buf.Bytes(), 0o644)
}

// dropAssignments removes every single assignment `sel = value` whose
// left-hand side prints as one of sels, and fails if one of sels is never
// assigned (a stale list).
func dropAssignments(f *ast.File, sels map[string]bool) error {
	if len(sels) == 0 {
		return nil
	}
	found := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		b, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		kept := b.List[:0]
		for _, st := range b.List {
			if as, ok := st.(*ast.AssignStmt); ok && as.Tok == token.ASSIGN && len(as.Lhs) == 1 {
				if name := selectorName(as.Lhs[0]); sels[name] {
					found[name] = true
					continue
				}
			}
			kept = append(kept, st)
		}
		b.List = kept
		return true
	})
	for s := range sels {
		if !found[s] {
			return fmt.Errorf("-unassign %s: no such assignment (stale list?)", s)
		}
	}
	return nil
}

// selectorName prints a chain of selectors (x.y.f), or "" for anything else.
func selectorName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x := selectorName(e.X); x != "" {
			return x + "." + e.Sel.Name
		}
	}
	return ""
}

func renameIdent(n ast.Node, unq map[string]string, renamed map[string]bool) {
	if id, ok := n.(*ast.Ident); ok {
		if nw, ok := unq[id.Name]; ok {
			renamed[id.Name] = true
			id.Name = nw
		}
	}
}

// replaceClearedSelectors turns every SelectorExpr with a nil Sel (a renamed
// qualified identifier, its X already holding the new name) into its X.
func replaceClearedSelectors(root ast.Node) {
	fix := func(e ast.Expr) ast.Expr {
		if s, ok := e.(*ast.SelectorExpr); ok && s.Sel == nil {
			return s.X
		}
		return e
	}
	ast.Inspect(root, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			n.Fun = fix(n.Fun)
			for i := range n.Args {
				n.Args[i] = fix(n.Args[i])
			}
		case *ast.IndexExpr:
			n.X = fix(n.X)
		case *ast.IndexListExpr:
			n.X = fix(n.X)
		case *ast.AssignStmt:
			for i := range n.Rhs {
				n.Rhs[i] = fix(n.Rhs[i])
			}
		case *ast.ValueSpec:
			for i := range n.Values {
				n.Values[i] = fix(n.Values[i])
			}
		case *ast.KeyValueExpr:
			n.Value = fix(n.Value)
		case *ast.CompositeLit:
			for i := range n.Elts {
				n.Elts[i] = fix(n.Elts[i])
			}
		case *ast.ReturnStmt:
			for i := range n.Results {
				n.Results[i] = fix(n.Results[i])
			}
		}
		return true
	})
}

func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.IndexListExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

func addImport(f *ast.File, name, path string) {
	spec := &ast.ImportSpec{Name: ast.NewIdent(name), Path: &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(path)}}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			g.Specs = append(g.Specs, spec)
			f.Imports = append(f.Imports, spec)
			return
		}
	}
	f.Decls = append([]ast.Decl{&ast.GenDecl{Tok: token.IMPORT, Specs: []ast.Spec{spec}}}, f.Decls...)
	f.Imports = append(f.Imports, spec)
}

// removeUnusedImports drops imports no selector refers to any more. The name
// of an unnamed import is guessed from its path (guessName); a wrong guess
// only keeps an unused import, which the compiler then reports.
func removeUnusedImports(f *ast.File) error {
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := s.X.(*ast.Ident); ok {
				used[x.Name] = true
			}
		}
		return true
	})
	var paths []string
	for _, im := range f.Imports {
		if im.Name == nil {
			p, _ := strconv.Unquote(im.Path.Value)
			paths = append(paths, p)
		}
	}
	names := map[string]string{}
	for _, p := range paths {
		names[p] = guessName(p)
	}
	keep := func(im *ast.ImportSpec) bool {
		p, _ := strconv.Unquote(im.Path.Value)
		name := names[p]
		if im.Name != nil {
			name = im.Name.Name
		}
		return name == "" || name == "." || name == "_" || used[name]
	}
	var imports []*ast.ImportSpec
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		var specs []ast.Spec
		for _, s := range g.Specs {
			if keep(s.(*ast.ImportSpec)) {
				specs = append(specs, s)
				imports = append(imports, s.(*ast.ImportSpec))
			}
		}
		g.Specs = specs
	}
	f.Imports = imports
	return nil
}

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			m[x] = true
		}
	}
	return m
}

func pairs(s string) map[string]string {
	m := map[string]string{}
	for _, x := range strings.Split(s, ",") {
		if a, b, ok := strings.Cut(strings.TrimSpace(x), "="); ok {
			m[a] = b
		}
	}
	return m
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// guessName returns the usual package name of an import path: its last
// element, skipping a major-version suffix (k8s.io/klog/v2 is klog) and
// dropping a "go-" prefix and a ".vN" suffix (gopkg.in/inf.v0 is inf).
func guessName(path string) string {
	elems := strings.Split(path, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	name = strings.TrimPrefix(name, "go-")
	if i := strings.Index(name, ".v"); i > 0 {
		name = name[:i]
	}
	return strings.ReplaceAll(name, "-", "")
}
