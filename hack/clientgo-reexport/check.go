package main

import (
	"errors"
	"fmt"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// result is the generated file of one covered package and what went into
// it.
type result struct {
	target
	Version   string
	Source    []byte
	Overrides []override // hand-written names client-go also exports
	Notes     []omission // variables copied, functions held in variables
	Omitted   []omission // client-go's names left out
	upNames   []string   // client-go's exported names
	hand      map[string]bool
	pkg       *types.Package
}

// verdict is how a hand-written declaration compares with client-go's.
type verdict int

const (
	verdictIdentical  verdict = iota // same type: code compiles either way
	verdictAssignable                // results assignable to client-go's interface results
	verdictMethodSet                 // a distinct interface type with client-go's method set
	verdictSeparate                  // a variable of the same type, but a separate variable
)

// override is a name both the hand-written files and client-go declare.
type override struct {
	Name    string
	Verdict verdict
	Note    string
}

// run generates the file of each target.
func run(root string, ts []target) ([]*result, error) {
	l, err := newLoader(root, ts)
	if err != nil {
		return nil, err
	}
	// Every package is tried, so that one run reports every mismatch.
	var out []*result
	var errs []error
	for _, t := range ts {
		r, err := l.load(l.importPath(t))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// load generates the file of the covered package path and type-checks the
// package with it.
func (l *loader) load(path string) (*result, error) {
	if r := l.done[path]; r != nil {
		return r, nil
	}
	if l.busy[path] {
		return nil, fmt.Errorf("import cycle through %s", path)
	}
	l.busy[path] = true
	defer delete(l.busy, path)
	t := l.targets[path]
	u, err := l.upstream(t.Upstream)
	if err != nil {
		return nil, err
	}
	up, version := u.pkg, u.version
	h := l.hand[path]
	for _, f := range h.files {
		if f.Name.Name != up.Name() {
			return nil, fmt.Errorf("%s: package %s, want client-go's name %s", l.fset.Position(f.Package).Filename, f.Name.Name, up.Name())
		}
	}
	g := &gen{up: up, hand: h.names, deprecated: u.deprecated, callerSensitive: u.callerSensitive}
	decls, imports, omitted, notes, err := g.body()
	if err != nil {
		return nil, err
	}
	r := &result{target: t, Version: version, Omitted: omitted, Notes: notes, hand: h.names}
	for _, name := range up.Scope().Names() {
		if token.IsExported(name) {
			r.upNames = append(r.upNames, name)
		}
	}
	// Type-check the package with a provisional file; the header's
	// override list needs the types.
	src, err := assemble(r, up.Name(), imports, decls)
	if err != nil {
		return nil, err
	}
	genPath := filepath.Join(l.root, t.Dir, generatedName)
	f, err := parser.ParseFile(l.fset, genPath, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", genPath, err, src)
	}
	var errs []string
	conf := types.Config{
		Importer:  l,
		GoVersion: l.goVersion(),
		Error: func(err error) {
			if len(errs) < 30 {
				errs = append(errs, err.Error())
			}
		},
	}
	pkg, _ := conf.Check(path, l.fset, append(slices.Clone(h.files), f), nil)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s does not type-check with its generated file:\n\t%s", t.Dir, strings.Join(errs, "\n\t"))
	}
	r.pkg = pkg
	r.Overrides, err = compare(pkg, up, h.names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Dir, err)
	}
	if r.Source, err = assemble(r, up.Name(), imports, decls); err != nil {
		return nil, err
	}
	if missing := r.missingFrom(r.Source); len(missing) > 0 {
		return nil, fmt.Errorf("%s: generated file lacks %v (a generator bug)", t.Dir, missing)
	}
	l.done[path] = r
	return r, nil
}

// goVersion is the go directive of go.mod, as go/types wants it.
func (l *loader) goVersion() string {
	b, err := os.ReadFile(filepath.Join(l.root, "go.mod"))
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

// missingFrom returns client-go's exported names that neither the
// hand-written files nor the generated source src declare, and that are not
// left out on purpose.
func (r *result) missingFrom(src []byte) []string {
	have := topNames(src)
	var out []string
	for _, n := range r.upNames {
		if !have[n] && !r.hand[n] && !slices.ContainsFunc(r.Omitted, func(o omission) bool { return o.Name == n }) {
			out = append(out, n)
		}
	}
	return out
}

func (r *result) overrideLines() []string {
	var out []string
	for _, o := range r.Overrides {
		out = append(out, o.Name+": "+o.Note)
	}
	return out
}

// compare checks each hand-written exported name that client-go also
// exports against client-go's declaration: see the package doc.
func compare(ours, up *types.Package, hand map[string]bool) ([]override, error) {
	var out []override
	var bad []string
	for _, name := range up.Scope().Names() {
		if !token.IsExported(name) || !hand[name] {
			continue
		}
		u, o := up.Scope().Lookup(name), ours.Scope().Lookup(name)
		v, note, err := compareObj(o, u)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		out = append(out, override{name, v, note})
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("hand-written declarations that do not match client-go's (code written for client-go would not compile or would change meaning):\n\t%s", strings.Join(bad, "\n\t"))
	}
	return out, nil
}

func compareObj(o, u types.Object) (verdict, string, error) {
	qual := func(p *types.Package) string { return p.Path() }
	str := func(t types.Type) string { return types.TypeString(t, qual) }
	switch u := u.(type) {
	case *types.Func:
		of, ok := o.(*types.Func)
		if !ok {
			return 0, "", fmt.Errorf("client-go's is a function, this one a %s", kind(o))
		}
		osig, usig := of.Type().(*types.Signature), u.Type().(*types.Signature)
		if types.Identical(osig, usig) {
			return verdictIdentical, "identical signature", nil
		}
		mismatch := fmt.Errorf("signature %s, client-go's %s", str(osig), str(usig))
		if osig.TypeParams().Len() > 0 || usig.TypeParams().Len() > 0 {
			return 0, "", mismatch
		}
		if !types.Identical(types.NewSignatureType(nil, nil, nil, osig.Params(), nil, osig.Variadic()),
			types.NewSignatureType(nil, nil, nil, usig.Params(), nil, usig.Variadic())) ||
			osig.Results().Len() != usig.Results().Len() {
			return 0, "", mismatch
		}
		var notes []string
		for i := range usig.Results().Len() {
			ot, ut := osig.Results().At(i).Type(), usig.Results().At(i).Type()
			if types.Identical(ot, ut) {
				continue
			}
			if !types.IsInterface(ut) || !types.AssignableTo(ot, ut) {
				return 0, "", mismatch
			}
			notes = append(notes, fmt.Sprintf("result %d is %s, client-go's is the interface %s", i+1, str(ot), str(ut)))
		}
		return verdictAssignable, "ASSIGNABLE, not identical: " + strings.Join(notes, "; ") +
			" (a call compiles where client-go's does; a function value of client-go's type or a variable of the result's inferred type may not)", nil
	case *types.TypeName:
		ot, ok := o.(*types.TypeName)
		if !ok {
			return 0, "", fmt.Errorf("client-go's is a type, this one a %s", kind(o))
		}
		utp, otp := typeParamsOf(u.Type()), typeParamsOf(ot.Type())
		if utp.Len() > 0 || otp.Len() > 0 {
			if sameGeneric(ot, u) {
				return verdictIdentical, "identical (a generic alias)", nil
			}
			what := str(o.Type())
			if a, ok := o.Type().(*types.Alias); ok {
				what = "an alias of " + str(a.Rhs())
			}
			return 0, "", fmt.Errorf("generic type %s, not client-go's %s with the same type parameters: alias client-go's type or leave the name to the generated file", what, str(u.Type()))
		}
		if types.Identical(o.Type(), u.Type()) {
			return verdictIdentical, "identical type", nil
		}
		if types.IsInterface(u.Type()) && types.IsInterface(o.Type()) && types.Identical(o.Type().Underlying(), u.Type().Underlying()) {
			return verdictMethodSet, "A DISTINCT interface type with client-go's method set (values convert implicitly both ways; types built from it, such as []" + o.Name() + " or func(" + o.Name() + "), do not)", nil
		}
		return 0, "", fmt.Errorf("a type of its own (%s), not client-go's %s: alias client-go's type or leave the name to the generated file", describe(ot, str), str(u.Type()))
	case *types.Const:
		oc, ok := o.(*types.Const)
		if !ok {
			return 0, "", fmt.Errorf("client-go's is a constant, this one a %s", kind(o))
		}
		if !types.Identical(oc.Type(), u.Type()) || !constant.Compare(oc.Val(), token.EQL, u.Val()) {
			return 0, "", fmt.Errorf("constant %s %s, client-go's %s %s", str(oc.Type()), oc.Val(), str(u.Type()), u.Val())
		}
		return verdictIdentical, "identical constant", nil
	case *types.Var:
		if _, ok := o.(*types.Var); !ok {
			return 0, "", fmt.Errorf("client-go's is a variable, this one a %s", kind(o))
		}
		if !types.Identical(o.Type(), u.Type()) {
			return 0, "", fmt.Errorf("variable of type %s, client-go's %s", str(o.Type()), str(u.Type()))
		}
		return verdictSeparate, "A SEPARATE variable of client-go's type (assigning one does not change the other)", nil
	}
	return 0, "", fmt.Errorf("unexpected object %v", u)
}

// sameGeneric reports whether o is a generic alias of client-go's generic
// type u with equivalent type parameters: instantiating each with the
// other's type parameters succeeds (so the constraints accept each other's
// type sets) and gives the same type.
func sameGeneric(o, u *types.TypeName) bool {
	if !o.IsAlias() {
		return false
	}
	otp, utp := typeParamsOf(o.Type()), typeParamsOf(u.Type())
	if otp.Len() != utp.Len() {
		return false
	}
	args := func(l *types.TypeParamList) []types.Type {
		out := make([]types.Type, l.Len())
		for i := range out {
			out[i] = l.At(i)
		}
		return out
	}
	ctxt := types.NewContext()
	for _, a := range [][]types.Type{args(utp), args(otp)} {
		oi, err1 := types.Instantiate(ctxt, o.Type(), a, true)
		ui, err2 := types.Instantiate(ctxt, u.Type(), a, true)
		if err1 != nil || err2 != nil || !types.Identical(types.Unalias(oi), types.Unalias(ui)) {
			return false
		}
	}
	return true
}

// describe names the type a hand-written type name stands for: the type it
// aliases, or for a type defined here its (shortened) underlying type.
func describe(o *types.TypeName, str func(types.Type) string) string {
	t := types.Unalias(o.Type())
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != o.Pkg() {
		return str(t)
	}
	d := str(t.Underlying())
	if len(d) > 100 {
		d = d[:97] + "..."
	}
	return d
}

func kind(o types.Object) string {
	switch o.(type) {
	case *types.Func:
		return "function"
	case *types.TypeName:
		return "type"
	case *types.Const:
		return "constant"
	case *types.Var:
		return "variable"
	}
	return fmt.Sprintf("%T", o)
}
