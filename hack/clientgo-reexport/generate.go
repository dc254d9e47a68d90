package main

import (
	"bytes"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// varPolicy says how an exported variable of client-go is re-exported.
type varPolicy struct {
	copy bool   // var X = pkg.X; otherwise not re-exported
	why  string // said in the generated file's header
}

// varPolicies decides, for each exported variable of a covered package,
// whether a copy is faithful. A variable cannot be aliased: a copy made at
// initialisation holds the value client-go had then, and assigning to the
// copy changes nothing in client-go. So a variable is copied only when
// client-go never reassigns it and users have no reason to (error
// sentinels: the copy is the same error value, == and errors.Is match);
// a hook or setting users assign to (client-go's
// utilruntime.ErrorHandlers, for instance) is not re-exported and is listed
// in the header, and users keep importing client-go's package for it. The
// generator fails on an exported variable that is not in this table, so a
// client-go release that adds one needs a decision here.
var varPolicies = map[string]varPolicy{
	"k8s.io/client-go/tools/cache.ErrFIFOClosed":             {true, sentinel},
	"k8s.io/client-go/tools/cache.ErrZeroLengthDeltasObject": {true, sentinel},
	"k8s.io/client-go/tools/watch.ErrWatchClosed":            {true, sentinel},
}

const sentinel = "client-go never reassigns this error sentinel, so the copy holds the same error value: == and errors.Is match client-go's"

// omission is a name of client-go's that the generated file leaves out.
type omission struct {
	Name, Why string
}

// gen renders one generated file.
type gen struct {
	up         *types.Package
	hand       map[string]bool // top-level names of the hand-written files
	deprecated map[string]bool // client-go's deprecated names
	// callerSensitive: client-go's functions that look at their caller
	// (the call they make to do so).
	callerSensitive map[string]string
	names           map[string]string
	used            map[*types.Package]bool
	upName          string // the import name of client-go's package
}

// body renders the declarations and imports of the generated file (without
// its header comment) and the names it leaves out or re-exports as
// variables.
//
// imports maps each import path to its import name, "" where that is the
// package's own name.
func (g *gen) body() (decls []byte, imports map[string]string, omitted, notes []omission, err error) {
	// Pass one records which packages are named; pass two renders with
	// import names that do not collide.
	g.names = nil
	g.used = map[*types.Package]bool{g.up: true}
	if _, _, _, err := g.render(); err != nil {
		return nil, nil, nil, nil, err
	}
	g.assignNames()
	decls, omitted, notes, err = g.render()
	imports = map[string]string{}
	for p := range g.used {
		name := g.names[p.Path()]
		if name == p.Name() {
			name = "" // the package's own name: no need to write it
		}
		imports[p.Path()] = name
	}
	return decls, imports, omitted, notes, err
}

// assignNames gives each used package an import name: its own name unless
// another package or a hand-written top-level name has it; client-go's
// package under generation yields its name to the others (its types are
// mostly named through the local aliases) and becomes cg<name>.
func (g *gen) assignNames() {
	var paths []*types.Package
	for p := range g.used {
		if p != g.up {
			paths = append(paths, p)
		}
	}
	slices.SortFunc(paths, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	g.names = map[string]string{}
	taken := map[string]bool{}
	pick := func(want string) string {
		name := want
		for i := 2; taken[name] || g.hand[name] || token.Lookup(name).IsKeyword() || types.Universe.Lookup(name) != nil; i++ {
			name = want + strconv.Itoa(i)
		}
		taken[name] = true
		return name
	}
	for _, p := range paths {
		g.names[p.Path()] = pick(p.Name())
	}
	want := g.up.Name()
	if taken[want] || g.hand[want] {
		want = "cg" + want
	}
	g.upName = pick(want)
	g.names[g.up.Path()] = g.upName
}

// qualifier names packages by import name, or by nothing for client-go's
// package when local is set (its names then resolve to this file's
// aliases).
func (g *gen) qualifier(local bool) types.Qualifier {
	return func(p *types.Package) string {
		g.used[p] = true
		if local && p == g.up {
			return ""
		}
		if g.names == nil {
			return p.Name()
		}
		return g.names[p.Path()]
	}
}

func (g *gen) render() (decls []byte, omitted, notes []omission, err error) {
	var consts, vars, typs, funcs bytes.Buffer
	scope := g.up.Scope()
	up := g.upName
	if up == "" {
		up = g.up.Name()
	}
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() || g.hand[name] {
			continue
		}
		link := fmt.Sprintf("[%s.%s]", up, name)
		doc := func(text string) string {
			if g.deprecated[name] {
				return comment(text, "Deprecated: client-go deprecates "+link+"; see its documentation.")
			}
			return comment(text)
		}
		switch obj := obj.(type) {
		case *types.Const:
			g.used[g.up] = true
			fmt.Fprintf(&consts, "%sconst %s = %s.%s\n\n", doc(name+" is client-go's "+link+"."), name, up, name)
		case *types.Var:
			key := g.up.Path() + "." + name
			pol, ok := varPolicies[key]
			if !ok {
				return nil, nil, nil, fmt.Errorf("%s is an exported variable of type %s with no entry in varPolicies (hack/clientgo-reexport/generate.go): decide whether a copy is faithful",
					key, types.TypeString(obj.Type(), nil))
			}
			if !pol.copy {
				omitted = append(omitted, omission{name, pol.why})
				continue
			}
			notes = append(notes, omission{name, "copied at initialisation: " + pol.why})
			fmt.Fprintf(&vars, "%svar %s = %s.%s\n\n",
				doc(name+" is a copy of client-go's "+link+", made at initialisation: "+pol.why+"."), name, up, name)
		case *types.TypeName:
			tparams := typeParamsOf(obj.Type())
			if tparams.Len() == 0 {
				fmt.Fprintf(&typs, "%stype %s = %s.%s\n\n",
					doc(name+" is client-go's "+link+", as an alias: its methods and fields are client-go's."), name, up, name)
				g.used[g.up] = true
				continue
			}
			list, args, problem := g.typeParams(tparams)
			if problem != "" {
				omitted = append(omitted, omission{name, problem})
				continue
			}
			g.used[g.up] = true
			fmt.Fprintf(&typs, "%stype %s%s = %s.%s%s\n\n",
				doc(name+" is client-go's "+link+", as a generic alias: its methods and fields are client-go's."), name, list, up, name, args)
		case *types.Func:
			if err := g.wrapper(&funcs, obj, link, doc, &omitted, &notes); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	var b bytes.Buffer
	for _, part := range []*bytes.Buffer{&consts, &vars, &typs, &funcs} {
		b.Write(part.Bytes())
	}
	return b.Bytes(), omitted, notes, nil
}

// wrapper renders a function calling client-go's function obj.
func (g *gen) wrapper(b *bytes.Buffer, obj *types.Func, link string, doc func(string) string, omitted, notes *[]omission) error {
	name := obj.Name()
	up := g.names[g.up.Path()]
	if up == "" {
		up = g.up.Name()
	}
	sig := obj.Type().(*types.Signature)
	refs, problems := walk(sig, g.up)
	for i := range sig.TypeParams().Len() {
		r, p := walk(sig.TypeParams().At(i).Constraint(), g.up)
		refs, problems = append(refs, r...), append(problems, p...)
	}
	if len(problems) > 0 {
		why := "its signature names " + strings.Join(slices.Compact(problems), ", ") + ", which no other package can write"
		if sig.TypeParams().Len() > 0 {
			*omitted = append(*omitted, omission{name, why + " (a generic function cannot be held in a variable)"})
			return nil
		}
		*notes = append(*notes, omission{name, "a variable holding client-go's function: " + why})
		g.used[g.up] = true
		fmt.Fprintf(b, "%svar %s = %s.%s\n\n", doc(name+" is client-go's "+link+", held in a variable: "+why+"."), name, up, name)
		return nil
	}
	// A function that looks at its caller's location (to log it, say)
	// would see the wrapper: hold client-go's function instead.
	if api := g.callerSensitive[name]; api != "" {
		why := "it looks at its caller (it calls " + api + ", to log the caller's source location, say), which a wrapper would replace"
		if sig.TypeParams().Len() > 0 {
			return fmt.Errorf("%s.%s: generic, so it needs a wrapper, but %s", g.up.Path(), name, why)
		}
		*notes = append(*notes, omission{name, "a variable holding client-go's function: " + why})
		g.used[g.up] = true
		fmt.Fprintf(b, "%svar %s = %s.%s\n\n", doc(name+" is client-go's "+link+", held in a variable rather than wrapped: "+why+"."), name, up, name)
		return nil
	}
	// Name client-go's types by this file's aliases unless one of them is
	// defined by hand (then it may be a different type).
	local := true
	for _, r := range refs {
		if r.Pkg() == g.up && g.hand[r.Name()] {
			local = false
		}
	}
	q := g.qualifier(local)
	g.used[g.up] = true
	tlist, targs := "", ""
	if sig.TypeParams().Len() > 0 {
		parts := make([]string, sig.TypeParams().Len())
		args := make([]string, len(parts))
		for i := range parts {
			tp := sig.TypeParams().At(i)
			if g.isImportName(tp.Obj().Name()) {
				return fmt.Errorf("%s.%s: type parameter %s has the name of an import of the generated file", g.up.Path(), name, tp.Obj().Name())
			}
			parts[i] = tp.Obj().Name() + " " + types.TypeString(tp.Constraint(), q)
			args[i] = tp.Obj().Name()
		}
		tlist = "[" + strings.Join(parts, ", ") + "]"
		targs = "[" + strings.Join(args, ", ") + "]"
	}
	params := make([]string, sig.Params().Len())
	args := make([]string, len(params))
	for i := range params {
		p := sig.Params().At(i)
		pn := p.Name()
		if pn == "" || pn == "_" || g.isImportName(pn) || token.Lookup(pn).IsKeyword() {
			pn = fmt.Sprintf("arg%d", i)
		}
		t := types.TypeString(p.Type(), q)
		args[i] = pn
		if sig.Variadic() && i == len(params)-1 {
			t = "..." + types.TypeString(p.Type().(*types.Slice).Elem(), q)
			args[i] = pn + "..."
		}
		params[i] = pn + " " + t
	}
	results := ""
	switch n := sig.Results().Len(); n {
	case 0:
	case 1:
		results = " " + types.TypeString(sig.Results().At(0).Type(), q)
	default:
		rs := make([]string, n)
		for i := range rs {
			rs[i] = types.TypeString(sig.Results().At(i).Type(), q)
		}
		results = " (" + strings.Join(rs, ", ") + ")"
	}
	ret := "return "
	if sig.Results().Len() == 0 {
		ret = ""
	}
	fmt.Fprintf(b, "%sfunc %s%s(%s)%s {\n\t%s%s.%s%s(%s)\n}\n\n",
		doc(name+" calls client-go's "+link+"."), name, tlist, strings.Join(params, ", "), results, ret, up, name, targs, strings.Join(args, ", "))
	return nil
}

// comment renders paragraphs as a Go comment wrapped at 80 columns.
func comment(paragraphs ...string) string {
	var b strings.Builder
	for i, p := range paragraphs {
		if i > 0 {
			b.WriteString("//\n")
		}
		line := "//"
		for _, w := range strings.Fields(p) {
			if len(line)+1+len(w) > 80 && line != "//" {
				b.WriteString(line + "\n")
				line = "//"
			}
			line += " " + w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// isImportName reports whether name is an import name of the file (after
// assignNames).
func (g *gen) isImportName(name string) bool {
	for _, n := range g.names {
		if n == name {
			return true
		}
	}
	// Pass one: the names packages would get.
	if g.names == nil {
		for p := range g.used {
			if p.Name() == name {
				return true
			}
		}
	}
	return false
}

// typeParams renders the type parameter list of a generic alias and the
// argument list of its right-hand side: "[K comparable, V any]", "[K, V]".
func (g *gen) typeParams(tps *types.TypeParamList) (list, args, problem string) {
	parts := make([]string, tps.Len())
	names := make([]string, tps.Len())
	var refs []*types.TypeName
	var problems []string
	for i := range tps.Len() {
		r, p := walk(tps.At(i).Constraint(), g.up)
		refs, problems = append(refs, r...), append(problems, p...)
	}
	if len(problems) > 0 {
		return "", "", "its type parameters' constraints name " + strings.Join(slices.Compact(problems), ", ") + ", which no other package can write"
	}
	local := true
	for _, r := range refs {
		if r.Pkg() == g.up && g.hand[r.Name()] {
			local = false
		}
	}
	q := g.qualifier(local)
	for i := range tps.Len() {
		tp := tps.At(i)
		names[i] = tp.Obj().Name()
		parts[i] = names[i] + " " + types.TypeString(tp.Constraint(), q)
	}
	return "[" + strings.Join(parts, ", ") + "]", "[" + strings.Join(names, ", ") + "]", ""
}

func typeParamsOf(t types.Type) *types.TypeParamList {
	switch t := t.(type) {
	case *types.Named:
		return t.TypeParams()
	case *types.Alias:
		return t.TypeParams()
	}
	return nil
}

// walk returns the named types t refers to and what in t cannot be written
// outside their packages: unexported names (other than of the universe),
// packages under an internal directory, unexported fields or methods of
// literal struct and interface types.
func walk(t types.Type, up *types.Package) (refs []*types.TypeName, problems []string) {
	seen := map[types.Type]bool{}
	var visit func(types.Type)
	named := func(obj *types.TypeName, targs *types.TypeList) {
		refs = append(refs, obj)
		if obj.Pkg() != nil {
			if !obj.Exported() {
				problems = append(problems, "unexported "+obj.Pkg().Path()+"."+obj.Name())
			} else if internal(obj.Pkg().Path()) {
				problems = append(problems, obj.Pkg().Path()+"."+obj.Name()+" (an internal package)")
			}
		}
		for i := range targs.Len() {
			visit(targs.At(i))
		}
	}
	visit = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Alias:
			named(t.Obj(), t.TypeArgs())
		case *types.Named:
			named(t.Obj(), t.TypeArgs())
		case *types.Pointer:
			visit(t.Elem())
		case *types.Slice:
			visit(t.Elem())
		case *types.Array:
			visit(t.Elem())
		case *types.Chan:
			visit(t.Elem())
		case *types.Map:
			visit(t.Key())
			visit(t.Elem())
		case *types.Signature:
			visit(t.Params())
			visit(t.Results())
		case *types.Tuple:
			for i := range t.Len() {
				visit(t.At(i).Type())
			}
		case *types.Struct:
			for i := range t.NumFields() {
				f := t.Field(i)
				if !f.Exported() {
					problems = append(problems, "a struct field "+f.Name()+" unexported in "+f.Pkg().Path())
				}
				visit(f.Type())
			}
		case *types.Interface:
			for i := range t.NumExplicitMethods() {
				m := t.ExplicitMethod(i)
				if !m.Exported() {
					problems = append(problems, "an interface method "+m.Name()+" unexported in "+m.Pkg().Path())
				}
				visit(m.Type())
			}
			for i := range t.NumEmbeddeds() {
				visit(t.EmbeddedType(i))
			}
		case *types.Union:
			for i := range t.Len() {
				visit(t.Term(i).Type())
			}
		case *types.TypeParam, *types.Basic:
		}
	}
	visit(t)
	return refs, problems
}

// internal reports whether an import path is under an internal directory
// (importable only from within its parent).
func internal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// header renders the generated file's opening comments.
func header(r *result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by %s; DO NOT EDIT.\n\n", command)
	b.WriteString(comment("This file re-exports "+r.Upstream+" "+r.Version+": every exported name of it "+
		"that this package does not define in its own files. Types are aliases (their methods and fields are "+
		"client-go's), constants are constants, functions are wrappers with client-go's signature that call "+
		"client-go's, variables are as listed below. make clientgo-check (in make lint) fails when this file "+
		"is stale or the package lacks a name client-go exports.",
		"Defined by this package's own files instead (listwatch's), each checked against client-go's declaration:"))
	list(&b, r.overrideLines())
	b.WriteString("//\n// Variables, and functions not re-exported as functions:\n")
	list(&b, lines(r.Notes))
	b.WriteString("//\n// Not re-exported (code using them keeps importing client-go's package):\n")
	list(&b, lines(r.Omitted))
	return b.String()
}

// list renders items as a comment list, each wrapped at 80 columns.
func list(b *strings.Builder, items []string) {
	if len(items) == 0 {
		items = []string{"none"}
	}
	for _, it := range items {
		c := comment(it)
		c = strings.Replace(c, "// ", "//   - ", 1)
		c = strings.ReplaceAll(c, "\n// ", "\n//     ")
		b.WriteString(c)
	}
}

func lines(oms []omission) []string {
	var out []string
	for _, o := range oms {
		out = append(out, o.Name+": "+o.Why)
	}
	return out
}

// assemble puts the file together: header, package clause, imports,
// declarations; gofmt'd.
func assemble(r *result, pkgName string, imports map[string]string, decls []byte) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header(r))
	// staticcheck would flag each alias of, and each signature naming, a
	// name client-go deprecates (SA1019); re-exporting them is the point,
	// and the deprecations are carried over in the doc comments.
	b.WriteString("\n//lint:file-ignore SA1019 re-exports client-go's names, deprecated ones included (marked deprecated here too)\n")
	fmt.Fprintf(&b, "\npackage %s\n\n", pkgName)
	var paths []string
	for p := range imports {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if len(paths) > 0 {
		// The standard library first, as goimports groups them.
		std := func(p string) bool { return !strings.Contains(strings.Split(p, "/")[0], ".") }
		slices.SortStableFunc(paths, func(a, b string) int {
			switch {
			case std(a) == std(b):
				return 0
			case std(a):
				return -1
			}
			return 1
		})
		b.WriteString("import (\n")
		for i, p := range paths {
			if i > 0 && std(paths[i-1]) && !std(p) {
				b.WriteString("\n")
			}
			if name := imports[p]; name == "" {
				fmt.Fprintf(&b, "\t%q\n", p)
			} else {
				fmt.Fprintf(&b, "\t%s %q\n", name, p)
			}
		}
		b.WriteString(")\n\n")
	}
	b.Write(decls)
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gofmt of the generated %s: %w\n%s", pkgName, err, b.Bytes())
	}
	return out, nil
}

// topNames returns the package-level names declared by a Go source.
func topNames(src []byte) map[string]bool {
	m := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Base(generatedName), src, parser.SkipObjectResolution)
	if err != nil {
		return m
	}
	for _, d := range f.Decls {
		for _, n := range declNames(d) {
			m[n] = true
		}
	}
	return m
}
