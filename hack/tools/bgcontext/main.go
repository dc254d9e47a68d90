// Command bgcontext fails when a test calls context.Background() or
// context.TODO() where the test's own context is at hand: inside a function
// (or a function literal within one) that has a named *testing.T,
// *testing.B, *testing.F or testing.TB parameter. Use t.Context() there: it
// is cancelled when the test ends, so goroutines and requests started with
// it do not outlive the test.
//
// Not flagged: functions without such a parameter (examples, helpers,
// TestMain), and function literals passed to a Cleanup call, where the
// test's context is already cancelled. A call that needs a context of its
// own anyway is allowed by a comment on its line or the line above:
//
//	ctx := context.Background() //lint:allow-background outlives the test on purpose
//
// The reason after the directive is required.
//
// Usage:
//
//	bgcontext [-allow FILE] [-write-allow] ROOT
//
// walks ROOT's _test.go files (skipping testdata, hidden directories and
// nested modules) and prints each offender as path:line:col. An allowlist
// FILE holds lines "path count" (path relative to ROOT; # starts a
// comment): a listed file may hold up to count offenders. It lists files
// whose owners have not moved to t.Context() yet, so that this check could
// be turned on without touching them; lower or remove an entry as its file
// is fixed. -write-allow rewrites FILE with the current offenders. The exit
// status is 1 when an offender is not covered by the allowlist.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// directive allows one call when followed by a reason.
const directive = "//lint:allow-background"

// finding is one offending call.
type finding struct {
	path      string // slash-separated, relative to the root
	line, col int
	call      string // "context.Background()"
	use       string // "t.Context()"
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s in a test: use %s (or add %s <reason>)", f.path, f.line, f.col, f.call, f.use, directive)
}

func main() {
	allowFile := flag.String("allow", "", "allowlist file (lines \"path count\")")
	writeAllow := flag.Bool("write-allow", false, "rewrite the allowlist with the current offenders")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: bgcontext [-allow FILE] [-write-allow] ROOT")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || (*writeAllow && *allowFile == "") {
		flag.Usage()
		os.Exit(2)
	}
	findings, err := check(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bgcontext:", err)
		os.Exit(2)
	}
	if *writeAllow {
		if err := os.WriteFile(*allowFile, []byte(allowlist(findings)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "bgcontext:", err)
			os.Exit(2)
		}
		return
	}
	allow := map[string]int{}
	if *allowFile != "" {
		if allow, err = readAllow(*allowFile); err != nil {
			fmt.Fprintln(os.Stderr, "bgcontext:", err)
			os.Exit(2)
		}
	}
	if report(os.Stdout, findings, allow) {
		os.Exit(1)
	}
}

// report prints the findings the allowlist does not cover, and notes
// entries that allow more than they need; it returns whether any finding
// was printed.
func report(w io.Writer, findings []finding, allow map[string]int) bool {
	perFile := map[string][]finding{}
	for _, f := range findings {
		perFile[f.path] = append(perFile[f.path], f)
	}
	failed := false
	for _, f := range findings {
		if len(perFile[f.path]) > allow[f.path] {
			fmt.Fprintln(w, f)
			failed = true
		}
	}
	paths := make([]string, 0, len(allow))
	for p := range allow {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if n := len(perFile[p]); n < allow[p] {
			fmt.Fprintf(w, "note: the allowlist allows %d in %s, which now has %d: lower it\n", allow[p], p, n)
		}
	}
	return failed
}

// check returns the offenders under root, in path and position order.
func check(root string) ([]finding, error) {
	var out []finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found, err := checkFile(filepath.ToSlash(rel), src)
		out = append(out, found...)
		return err
	})
	return out, err
}

// checkFile returns the offenders in one test file.
func checkFile(path string, src []byte) ([]finding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	ctxName, testingName := importName(f, "context"), importName(f, "testing")
	if ctxName == "" || testingName == "" {
		return nil, nil
	}
	// allowed holds the lines covered by a directive with a reason: its
	// own and the next.
	allowed := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if rest, ok := strings.CutPrefix(c.Text, directive); ok && strings.TrimSpace(rest) != "" &&
				(rest[0] == ' ' || rest[0] == '\t') {
				line := fset.Position(c.Slash).Line
				allowed[line], allowed[line+1] = true, true
			}
		}
	}
	v := &visitor{fset: fset, path: path, ctx: ctxName, testing: testingName, allowed: allowed}
	ast.Walk(v, f)
	return v.found, nil
}

// importName is the name under which f imports path, or "" if it does not
// (or imports it as _ or .).
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != path {
			continue
		}
		if imp.Name == nil {
			return path[strings.LastIndex(path, "/")+1:]
		}
		if imp.Name.Name == "_" || imp.Name.Name == "." {
			return ""
		}
		return imp.Name.Name
	}
	return ""
}

// frame is one enclosing function: tb names its testing parameter ("" for
// none); cleanup marks a function literal passed to Cleanup, where the
// test's context is no longer live.
type frame struct {
	tb      string
	cleanup bool
}

type visitor struct {
	fset          *token.FileSet
	path          string
	ctx, testing  string
	allowed       map[int]bool
	stack         []frame
	cleanupFuncs  map[*ast.FuncLit]bool
	found         []finding
	pendingFrames []ast.Node
}

func (v *visitor) Visit(n ast.Node) ast.Visitor {
	if n == nil {
		// End of a node's children: pop its frame if it pushed one.
		if k := len(v.pendingFrames); k > 0 {
			last := v.pendingFrames[k-1]
			v.pendingFrames = v.pendingFrames[:k-1]
			if last != nil {
				v.stack = v.stack[:len(v.stack)-1]
			}
		}
		return nil
	}
	var pushed ast.Node
	switch n := n.(type) {
	case *ast.FuncDecl:
		v.stack = append(v.stack, frame{tb: v.tbParam(n.Type)})
		pushed = n
	case *ast.FuncLit:
		v.stack = append(v.stack, frame{tb: v.tbParam(n.Type), cleanup: v.cleanupFuncs[n]})
		pushed = n
	case *ast.CallExpr:
		if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Cleanup" && len(n.Args) == 1 {
			if lit, ok := n.Args[0].(*ast.FuncLit); ok {
				if v.cleanupFuncs == nil {
					v.cleanupFuncs = map[*ast.FuncLit]bool{}
				}
				v.cleanupFuncs[lit] = true
			}
		}
		v.call(n)
	}
	v.pendingFrames = append(v.pendingFrames, pushed)
	return v
}

// call records n if it is an offending context.Background/TODO call.
func (v *visitor) call(n *ast.CallExpr) {
	sel, ok := n.Fun.(*ast.SelectorExpr)
	if !ok || len(n.Args) != 0 || (sel.Sel.Name != "Background" && sel.Sel.Name != "TODO") {
		return
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != v.ctx {
		return
	}
	tb := v.liveTB()
	pos := v.fset.Position(n.Pos())
	if tb == "" || v.allowed[pos.Line] {
		return
	}
	v.found = append(v.found, finding{path: v.path, line: pos.Line, col: pos.Column,
		call: "context." + sel.Sel.Name + "()", use: tb + ".Context()"})
}

// liveTB is the testing parameter whose context is live at the current
// point: the innermost one, unless a Cleanup function comes first.
func (v *visitor) liveTB() string {
	for i := len(v.stack) - 1; i >= 0; i-- {
		if v.stack[i].tb != "" {
			return v.stack[i].tb
		}
		if v.stack[i].cleanup {
			return ""
		}
	}
	return ""
}

// tbParam is the name of ft's first named *testing.T, *testing.B,
// *testing.F or testing.TB parameter, or "".
func (v *visitor) tbParam(ft *ast.FuncType) string {
	if ft.Params == nil {
		return ""
	}
	for _, field := range ft.Params.List {
		if !v.isTB(field.Type) {
			continue
		}
		for _, name := range field.Names {
			if name.Name != "_" {
				return name.Name
			}
		}
	}
	return ""
}

func (v *visitor) isTB(t ast.Expr) bool {
	if star, ok := t.(*ast.StarExpr); ok {
		sel, ok := star.X.(*ast.SelectorExpr)
		return ok && v.isTesting(sel.X) && (sel.Sel.Name == "T" || sel.Sel.Name == "B" || sel.Sel.Name == "F")
	}
	sel, ok := t.(*ast.SelectorExpr)
	return ok && v.isTesting(sel.X) && sel.Sel.Name == "TB"
}

func (v *visitor) isTesting(x ast.Expr) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == v.testing
}

// allowlist renders findings as an allowlist file.
func allowlist(findings []finding) string {
	counts := map[string]int{}
	for _, f := range findings {
		counts[f.path]++
	}
	paths := make([]string, 0, len(counts))
	for p := range counts {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var b strings.Builder
	b.WriteString("# Test files allowed to call context.Background()/TODO() where t.Context() is at hand, as\n")
	b.WriteString("# \"path count\". Written by bgcontext -write-allow; lower or remove an entry once its file\n")
	b.WriteString("# uses t.Context() (or //lint:allow-background <reason> where a background context is meant).\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "%s %d\n", p, counts[p])
	}
	return b.String()
}

// readAllow parses an allowlist file.
func readAllow(name string) (map[string]int, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	allow := map[string]int{}
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		n, err := 0, error(nil)
		if len(fields) == 2 {
			n, err = strconv.Atoi(fields[1])
		}
		if len(fields) != 2 || err != nil || n < 1 {
			return nil, fmt.Errorf("%s:%d: want \"path count\" with count >= 1, got %q", name, ln, sc.Text())
		}
		allow[fields[0]] = n
	}
	return allow, sc.Err()
}
