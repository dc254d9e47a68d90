package main

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// conflictPolicy is the decision to replace a client-go type although
// declarations of client-go's package that stay client-go's name it.
type conflictPolicy struct {
	// names are those declarations, exactly: a client-go release that
	// names the type in one more fails the generation until it is decided.
	names []string
	// why is said in the generated file's header, with the names.
	why string
}

// conflictPolicies decides, for each client-go type that a hand-written
// type replaces while client-go declarations left to client-go (aliases,
// wrappers) still name client-go's type, that the replacement is worth
// what it breaks. Such a declaration keeps meaning client-go's type, so
// code that spells a value of it with this package's name of the replaced
// type no longer compiles after the import switch: a function literal
// func(r *cache.Reflector, err error) given where client-go's
// cache.WatchErrorHandler is expected names listwatch's Reflector, and
// client-go's handler type wants client-go's. No declaration can fix that
// (client-go's SharedInformer interface, which every informer of client-go
// and of its typed informers packages implements, takes client-go's handler
// type), so each such replacement needs a decision here, and the generator
// fails on one without it.
var conflictPolicies = map[string]conflictPolicy{
	"k8s.io/client-go/tools/cache.Reflector": {
		names: []string{"DefaultWatchErrorHandler", "WatchErrorHandler", "WatchErrorHandlerWithContext"},
		why: "listwatch's reflector engine answers NewReflector, NewReflectorWithOptions, NewNamedReflector " +
			"and NewNamespaceKeyedIndexerAndReflector (issue 28, the kube-state-metrics door), with client-go's " +
			"exported fields (r.WatchListPageSize = 500 compiles), so the name Reflector must be listwatch's; " +
			"a watch error handler written as a function literal or function of *cache.Reflector " +
			"(SharedInformer.SetWatchErrorHandler, Config.WatchErrorHandler) then does not compile against this " +
			"package: such code names client-go's Reflector (import k8s.io/client-go/tools/cache for it; docs/clientgo.md)",
	},
}

// conflicts returns, for each replaced client-go type, the exported names
// of client-go's package that are not hand-written and whose declarations
// name it: a type's definition (fields, parameters and results, interface
// methods) or methods, a function's signature, a variable's type.
// Exported client-go types named on the way are not looked into (each is
// reported under its own name); unexported ones are, since code reaches
// them only through the exported name.
func (r *replacements) conflicts(hand map[string]bool) map[*types.TypeName][]string {
	out := map[*types.TypeName][]string{}
	for _, name := range r.up.Scope().Names() {
		if !token.IsExported(name) || hand[name] {
			continue
		}
		obj := r.up.Scope().Lookup(name)
		found := map[*types.TypeName]bool{}
		w := &mentionWalk{r: r, found: found, seen: map[types.Type]bool{}}
		switch obj := obj.(type) {
		case *types.TypeName:
			if r.types[obj] != nil {
				continue
			}
			t := types.Unalias(obj.Type())
			w.underlying(t)
			if n, ok := t.(*types.Named); ok && !types.IsInterface(n) {
				for i := range n.NumMethods() {
					if m := n.Method(i); m.Exported() {
						w.visit(m.Type())
					}
				}
			}
		case *types.Func, *types.Var:
			w.visit(obj.Type())
		}
		for ut := range found {
			out[ut] = append(out[ut], name)
		}
	}
	for ut := range out {
		slices.Sort(out[ut])
	}
	return out
}

// mentionWalk looks for replaced types inside one declaration.
type mentionWalk struct {
	r     *replacements
	found map[*types.TypeName]bool
	seen  map[types.Type]bool
}

// underlying visits the definition of a type of client-go's.
func (w *mentionWalk) underlying(t types.Type) {
	if n, ok := t.(*types.Named); ok {
		w.seen[n] = true
		w.visit(n.Underlying())
		return
	}
	w.visit(t)
}

func (w *mentionWalk) visit(t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		w.visit(types.Unalias(t))
	case *types.Named:
		if w.r.types[t.Origin().Obj()] != nil {
			w.found[t.Origin().Obj()] = true
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				w.visit(args.At(i))
			}
		}
		if t.Obj().Pkg() == w.r.up && !t.Obj().Exported() && !w.seen[t] {
			w.seen[t] = true
			w.visit(t.Underlying())
		}
	case *types.Pointer:
		w.visit(t.Elem())
	case *types.Slice:
		w.visit(t.Elem())
	case *types.Array:
		w.visit(t.Elem())
	case *types.Map:
		w.visit(t.Key())
		w.visit(t.Elem())
	case *types.Chan:
		w.visit(t.Elem())
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				w.visit(tup.At(i).Type())
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			w.visit(t.Field(i).Type())
		}
	case *types.Interface:
		for i := range t.NumExplicitMethods() {
			w.visit(t.ExplicitMethod(i).Type())
		}
		for i := range t.NumEmbeddeds() {
			w.visit(t.EmbeddedType(i))
		}
	}
}

// checkConflicts compares the conflicts of each replaced type with its
// decision in conflictPolicies: it returns a note for the header per
// replaced type with an accepted conflict, and the problems.
func (r *replacements) checkConflicts(hand map[string]bool) (notes map[*types.TypeName]string, bad []string) {
	notes = map[*types.TypeName]string{}
	for ut, names := range r.conflicts(hand) {
		key := r.up.Path() + "." + ut.Name()
		pol, ok := conflictPolicies[key]
		if !ok || !slices.Equal(pol.names, names) {
			decided := "no entry"
			if ok {
				decided = "an entry for " + strings.Join(pol.names, ", ")
			}
			bad = append(bad, fmt.Sprintf("%s: replaced, but client-go's %s still name client-go's %s, so code that "+
				"writes their values with this package's %s would not compile; conflictPolicies "+
				"(hack/clientgo-reexport/conflicts.go) has %s: decide",
				ut.Name(), strings.Join(names, ", "), ut.Name(), ut.Name(), decided))
			continue
		}
		notes[ut] = fmt.Sprintf("; CONFLICT, decided: client-go's %s still name client-go's type: %s",
			strings.Join(names, ", "), pol.why)
	}
	return notes, bad
}
