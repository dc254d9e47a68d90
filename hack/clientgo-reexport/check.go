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
	verdictReplaced                  // listwatch's type in place of client-go's, with at least its methods
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
// exports against client-go's declaration: see the package doc. A
// hand-written type that is not client-go's stands for it (verdictReplaced)
// when it has every exported method of client-go's type, with the same
// signatures once replaced types are read as ours: listwatch's queue for
// client-go's workqueue.Typed, say. Signatures are then compared with every
// replaced client-go type read as its replacement.
func compare(ours, up *types.Package, hand map[string]bool) ([]override, error) {
	var out []override
	var bad []string
	r := &replacements{ours: ours, up: up, types: map[*types.TypeName]*types.TypeName{}}
	var names []string
	for _, name := range up.Scope().Names() {
		if token.IsExported(name) && hand[name] {
			names = append(names, name)
		}
	}
	// Types first: the signatures of functions may name replaced types.
	for _, name := range names {
		u, o := up.Scope().Lookup(name), ours.Scope().Lookup(name)
		ut, ok1 := u.(*types.TypeName)
		ot, ok2 := o.(*types.TypeName)
		if !ok1 || !ok2 {
			continue
		}
		if _, _, err := compareObj(o, u, nil); err == nil {
			continue
		}
		r.types[ut] = ot
	}
	for ut, ot := range r.types {
		if err := r.methodsCovered(ot, ut); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", ut.Name(), err))
			delete(r.types, ut)
		}
	}
	conflictNotes, conflictsBad := r.checkConflicts(hand)
	bad = append(bad, conflictsBad...)
	for _, name := range names {
		u, o := up.Scope().Lookup(name), ours.Scope().Lookup(name)
		if ut, ok := u.(*types.TypeName); ok && r.types[ut] != nil {
			what := "method"
			if st, ok := types.Unalias(ut.Type()).Underlying().(*types.Struct); ok && hasExportedField(st) {
				what = "exported field (identical types) and method"
			}
			out = append(out, override{name, verdictReplaced, "REPLACED by " + types.TypeString(types.Unalias(o.Type()), func(p *types.Package) string { return p.Path() }) +
				", which has every " + what + " of client-go's type (code that names the type compiles; it is listwatch's value)" + conflictNotes[ut]})
			continue
		}
		if slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, name+": ") }) {
			continue
		}
		v, note, err := compareObj(o, u, r)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		out = append(out, override{name, v, note})
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("hand-written declarations that do not match client-go's (code written for client-go would not compile or would change meaning):\n\t%s", strings.Join(bad, "\n\t"))
	}
	return out, nil
}

// replacements maps client-go's types that the hand-written files replace
// to their replacements.
type replacements struct {
	ours, up *types.Package
	types    map[*types.TypeName]*types.TypeName
	ctxt     *types.Context
}

// subst returns t with every replaced client-go type read as its
// replacement (instantiated with the same type arguments).
func (r *replacements) subst(t types.Type) types.Type {
	if r == nil || len(r.types) == 0 {
		return t
	}
	if r.ctxt == nil {
		r.ctxt = types.NewContext()
	}
	switch t := t.(type) {
	case *types.Alias:
		if o := r.types[t.Obj()]; o != nil {
			return r.instantiate(o, t.TypeArgs())
		}
		if o := r.types[t.Origin().Obj()]; o != nil {
			return r.instantiate(o, t.TypeArgs())
		}
		return r.subst(types.Unalias(t))
	case *types.Named:
		if o := r.types[t.Origin().Obj()]; o != nil {
			return r.instantiate(o, t.TypeArgs())
		}
		return t
	case *types.Pointer:
		return types.NewPointer(r.subst(t.Elem()))
	case *types.Slice:
		return types.NewSlice(r.subst(t.Elem()))
	case *types.Array:
		return types.NewArray(r.subst(t.Elem()), t.Len())
	case *types.Map:
		return types.NewMap(r.subst(t.Key()), r.subst(t.Elem()))
	case *types.Chan:
		return types.NewChan(t.Dir(), r.subst(t.Elem()))
	case *types.Signature:
		tuple := func(tp *types.Tuple) *types.Tuple {
			vars := make([]*types.Var, tp.Len())
			for i := range vars {
				v := tp.At(i)
				vars[i] = types.NewParam(v.Pos(), v.Pkg(), v.Name(), r.subst(v.Type()))
			}
			return types.NewTuple(vars...)
		}
		// Type parameters are not carried over (a type parameter belongs to
		// one signature): generic signatures are instantiated first (see
		// sameInstantiated).
		return types.NewSignatureType(nil, nil, nil, tuple(t.Params()), tuple(t.Results()), t.Variadic())
	}
	return t
}

// instantiate returns o's type, instantiated with args when o is generic.
func (r *replacements) instantiate(o *types.TypeName, args *types.TypeList) types.Type {
	if args == nil || args.Len() == 0 {
		return o.Type()
	}
	list := make([]types.Type, args.Len())
	for i := range list {
		list[i] = args.At(i)
	}
	inst, err := types.Instantiate(r.ctxt, o.Type(), list, false)
	if err != nil {
		return o.Type()
	}
	return inst
}

// methodsCovered reports an error unless the replacement ot can stand
// for client-go's struct type ut: it has, on its pointer, every exported
// method ut has on its pointer, with the same signature once replaced
// types are read as ours, and, when ut has exported fields (code may read
// and set them: r.WatchListPageSize = 500), a field of each name with an
// identical type (fieldsCovered). Generic types are compared instantiated
// with client-go's own type parameters.
func (r *replacements) methodsCovered(ot, ut *types.TypeName) error {
	st, ok := types.Unalias(ut.Type()).Underlying().(*types.Struct)
	if !ok {
		return fmt.Errorf("a type of its own (%s), not client-go's %s: alias client-go's type or leave the name to the generated file",
			types.Unalias(ot.Type()), types.Unalias(ut.Type()))
	}
	if err := r.fieldsCovered(ot, ut, st); err != nil {
		return err
	}
	var uT, oT types.Type = ut.Type(), ot.Type()
	if tps := typeParamsOf(ut.Type()); tps.Len() > 0 {
		if typeParamsOf(ot.Type()).Len() != tps.Len() {
			return fmt.Errorf("replaced by %s, whose type parameters differ from client-go's", ot.Type())
		}
		args := make([]types.Type, tps.Len())
		for i := range args {
			args[i] = tps.At(i)
		}
		ctxt := types.NewContext()
		var err1, err2 error
		uT, err1 = types.Instantiate(ctxt, ut.Type(), args, false)
		oT, err2 = types.Instantiate(ctxt, ot.Type(), args, true)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("replaced by %s, which cannot take client-go's type arguments: %v", ot.Type(), errors.Join(err1, err2))
		}
	}
	ums, oms := types.NewMethodSet(types.NewPointer(uT)), types.NewMethodSet(types.NewPointer(oT))
	var missing []string
	for i := range ums.Len() {
		m := ums.At(i).Obj()
		if !m.Exported() {
			continue
		}
		sel := oms.Lookup(m.Pkg(), m.Name())
		if sel == nil {
			sel = oms.Lookup(nil, m.Name())
		}
		if sel == nil {
			missing = append(missing, m.Name()+" (absent)")
			continue
		}
		usig := r.subst(m.Type().(*types.Signature))
		if !types.Identical(dropRecv(sel.Obj().Type().(*types.Signature)), dropRecv(usig.(*types.Signature))) {
			missing = append(missing, fmt.Sprintf("%s (%s, client-go's %s)", m.Name(), sel.Obj().Type(), m.Type()))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("replaced by %s, which lacks client-go's methods: %s", types.Unalias(ot.Type()), strings.Join(missing, "; "))
	}
	return nil
}

// fieldsCovered reports an error unless ot has every exported field of
// client-go's struct st (ut's underlying type), each an exported field of
// ot's own struct (promoted ones count) with an identical type once
// replaced types are read as ours: code that reads or assigns the field
// compiles and means the same. An unexported field of client-go's is not
// looked at: no other package can use it.
func (r *replacements) fieldsCovered(ot, ut *types.TypeName, st *types.Struct) error {
	qual := func(p *types.Package) string { return p.Path() }
	var missing []string
	for i := range st.NumFields() {
		f := st.Field(i)
		if !f.Exported() {
			continue
		}
		want := r.subst(f.Type())
		obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(ot.Type()), true, ot.Pkg(), f.Name())
		got, ok := obj.(*types.Var)
		switch {
		case !ok || !got.IsField():
			missing = append(missing, fmt.Sprintf("%s %s (absent)", f.Name(), types.TypeString(want, qual)))
		case !types.Identical(got.Type(), want):
			missing = append(missing, fmt.Sprintf("%s %s (client-go's %s)", f.Name(), types.TypeString(got.Type(), qual), types.TypeString(want, qual)))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("replaced by %s, which lacks client-go's exported fields, whose code may read or set them: %s",
			types.TypeString(types.Unalias(ot.Type()), qual), strings.Join(missing, "; "))
	}
	return nil
}

// sameInstantiated reports whether osig equals usig with replaced types
// read as ours; generic signatures are compared instantiated with
// client-go's type parameters (their constraints must be identical).
func (r *replacements) sameInstantiated(osig, usig *types.Signature) bool {
	if r == nil || len(r.types) == 0 {
		return false
	}
	otp, utp := osig.TypeParams(), usig.TypeParams()
	if otp.Len() != utp.Len() {
		return false
	}
	if utp.Len() > 0 {
		args := make([]types.Type, utp.Len())
		for i := range args {
			args[i] = utp.At(i)
			if !types.Identical(otp.At(i).Constraint(), utp.At(i).Constraint()) {
				return false
			}
		}
		ctxt := types.NewContext()
		oi, err1 := types.Instantiate(ctxt, osig, args, false)
		ui, err2 := types.Instantiate(ctxt, usig, args, false)
		if err1 != nil || err2 != nil {
			return false
		}
		osig, usig = oi.(*types.Signature), ui.(*types.Signature)
	}
	return types.Identical(dropRecv(osig), r.subst(usig))
}

// hasExportedField reports whether st has a field other packages can use.
func hasExportedField(st *types.Struct) bool {
	for i := range st.NumFields() {
		if st.Field(i).Exported() {
			return true
		}
	}
	return false
}

// dropRecv returns sig without its receiver.
func dropRecv(sig *types.Signature) *types.Signature {
	return types.NewSignatureType(nil, nil, nil, sig.Params(), sig.Results(), sig.Variadic())
}

func compareObj(o, u types.Object, r *replacements) (verdict, string, error) {
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
		if r.sameInstantiated(osig, usig) {
			return verdictReplaced, "identical signature once replaced types are read as listwatch's", nil
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
