// Command doclinks fails when a doc link in a Go comment of the module
// ([Name], [Type.Method], [Type.Field], [pkg.Name]) names nothing: go doc
// and pkgsite render such a link as plain text without a word, so a rename
// would leave the comment behind silently. Links to packages outside the
// module are not checked.
//
// Usage:
//
//	doclinks ROOT
//
// reads ROOT/go.mod for the module path, parses every non-test .go file
// under ROOT (skipping testdata, hidden directories and nested modules),
// and prints each link that does not resolve as path:line: [link]. A link
// resolves to a top-level declaration of its package, or a method, field
// or interface method of one of its types (a name promoted through an
// embedded field is taken on trust). The exit status is 1 when a link does
// not resolve.
package main

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: doclinks ROOT")
		os.Exit(2)
	}
	findings, err := check(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclinks:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		os.Exit(1)
	}
}

// pkg is one package of the module: its name, its files and the names a
// link may use.
type pkg struct {
	name  string
	files []*ast.File
	// syms holds "Name" for top-level declarations and "Type.Name" for
	// methods, fields and interface methods; "Type.*" marks a type with
	// an embedded field or interface, whose promoted names are not known.
	syms map[string]bool
}

// check returns the links under root that do not resolve, as
// "path:line: [link] names nothing in <import path>", sorted.
func check(root string) ([]string, error) {
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{} // by import path
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		ip := path.Join(module, filepath.ToSlash(rel))
		pk := pkgs[ip]
		if pk == nil {
			pk = &pkg{name: f.Name.Name, syms: map[string]bool{}}
			pkgs[ip] = pk
		}
		pk.files = append(pk.files, f)
		declare(pk.syms, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	byName := map[string][]string{} // package name → import paths in the module
	for ip, pk := range pkgs {
		byName[pk.name] = append(byName[pk.name], ip)
	}
	var out []string
	for ip, pk := range pkgs {
		for _, f := range pk.files {
			imports := map[string]string{}
			for _, im := range f.Imports {
				p := strings.Trim(im.Path.Value, `"`)
				name := path.Base(p)
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = p
			}
			cp := &comment.Parser{
				LookupPackage: func(name string) (string, bool) {
					if p, ok := imports[name]; ok {
						return p, true
					}
					if ips := byName[name]; len(ips) == 1 {
						return ips[0], true
					}
					return "", false
				},
				// Every [Name] is a link to check: the default parser
				// turns one that names nothing into plain text.
				LookupSym: func(recv, name string) bool { return true },
			}
			for _, cg := range f.Comments {
				for _, l := range links(cp.Parse(cg.Text())) {
					target := pk
					if l.ImportPath != "" {
						target = pkgs[l.ImportPath]
					}
					if target == nil || resolves(target.syms, l) {
						continue
					}
					pos := fset.Position(cg.Pos())
					rel, _ := filepath.Rel(root, pos.Filename)
					in := ip
					if l.ImportPath != "" {
						in = l.ImportPath
					}
					out = append(out, fmt.Sprintf("%s:%d: [%s] names nothing in %s", filepath.ToSlash(rel), pos.Line, linkText(l), in))
				}
			}
		}
	}
	slices.Sort(out)
	return out, nil
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

// declare records f's top-level names, and its types' methods and fields.
func declare(syms map[string]bool, f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				syms[d.Name.Name] = true
			} else if recv := typeName(d.Recv.List[0].Type); recv != "" {
				syms[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					declareType(syms, s)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						syms[n.Name] = true
					}
				}
			}
		}
	}
}

func declareType(syms map[string]bool, s *ast.TypeSpec) {
	t := s.Name.Name
	syms[t] = true
	var fields *ast.FieldList
	switch tt := s.Type.(type) {
	case *ast.StructType:
		fields = tt.Fields
	case *ast.InterfaceType:
		fields = tt.Methods
	default:
		// An alias or a defined type over another type: its methods and
		// fields may come from elsewhere.
		syms[t+".*"] = true
		return
	}
	for _, fl := range fields.List {
		for _, n := range fl.Names {
			syms[t+"."+n.Name] = true
		}
		if len(fl.Names) == 0 {
			syms[t+".*"] = true
			if n := typeName(fl.Type); n != "" {
				syms[t+"."+n] = true
			}
		}
	}
}

// typeName returns the name of a receiver or embedded type: T, *T, T[P],
// pkg.T.
func typeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func resolves(syms map[string]bool, l *comment.DocLink) bool {
	if l.Name == "" {
		return true // a link to the package itself
	}
	if l.Recv == "" {
		return syms[l.Name]
	}
	return syms[l.Recv+"."+l.Name] || (syms[l.Recv] && syms[l.Recv+".*"])
}

// links returns the doc links of a parsed comment.
func links(d *comment.Doc) []*comment.DocLink {
	var out []*comment.DocLink
	var walk func([]comment.Text)
	walk = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case *comment.DocLink:
				out = append(out, t)
			case *comment.Link:
				walk(t.Text)
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.Heading:
			walk(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						walk(p.Text)
					}
				}
			}
		}
	}
	return out
}

func linkText(l *comment.DocLink) string {
	s := l.Name
	if l.Recv != "" {
		s = l.Recv + "." + s
	}
	if l.ImportPath != "" {
		s = path.Base(l.ImportPath) + "." + s
	}
	return s
}
