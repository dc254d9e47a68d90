package reflector

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReflectorDocNamesEveryEffectInputPhaseAndReason keeps
// docs/reflector.md from falling behind the machine: every exported type
// with an isEffect or isInput method, and every exported Phase and Reason
// constant, must be named there (in backquotes).
func TestReflectorDocNamesEveryEffectInputPhaseAndReason(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "reflector.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, documentedNames(f)...)
	}
	if len(names) < 30 {
		t.Fatalf("found only %d names to check; the parser missed something: %v", len(names), names)
	}
	for _, n := range names {
		if !named(string(doc), n) {
			t.Errorf("docs/reflector.md does not name %s", n)
		}
	}
}

// named reports whether doc names n as the doc's tables do: a type as
// `Name`, `Name{...}` or `Name(...)`; a Reason by its value's name
// (`Forbidden` for ReasonForbidden); a Phase by its string (`listing` for
// PhaseListing).
func named(doc, n string) bool {
	forms := []string{n + "`", n + "{", n + "("}
	if r, ok := strings.CutPrefix(n, "Reason"); ok {
		forms = append(forms, r+"`")
	}
	if p, ok := strings.CutPrefix(n, "Phase"); ok {
		forms = append(forms, strings.ToLower(p)+"`")
	}
	for _, f := range forms {
		if strings.Contains(doc, "`"+f) {
			return true
		}
	}
	return false
}

// documentedNames returns the exported receivers of isEffect and isInput
// methods, and the exported constants of type Phase or Reason, in f.
func documentedNames(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || (d.Name.Name != "isEffect" && d.Name.Name != "isInput") {
				continue
			}
			typ := d.Recv.List[0].Type
			if ix, ok := typ.(*ast.IndexExpr); ok {
				typ = ix.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
				out = append(out, id.Name)
			}
		case *ast.GenDecl:
			if d.Tok != token.CONST {
				continue
			}
			var typ string
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok {
					typ = id.Name
				}
				if typ != "Phase" && typ != "Reason" {
					continue
				}
				for _, n := range vs.Names {
					if n.IsExported() {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}
