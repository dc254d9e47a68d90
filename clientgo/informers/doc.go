// Package informers is client-go's [k8s.io/client-go/informers] (the shared informer factory of the built-in resources) under
// listwatch's import path: code written for client-go's package compiles
// unchanged when its import path k8s.io/client-go/informers becomes
// github.com/listwatch/listwatch/clientgo/informers.
//
// Each exported name is listwatch's or client-go's. The names this package
// declares in its own files (every file but zz_generated.reexport.go) are
// listwatch's: drop-ins with client-go's signatures, checked against
// client-go's by the generator. Every other name is client-go's, re-exported
// by zz_generated.reexport.go (make clientgo-gen): types as aliases, so values
// pass freely between this package, client-go's and everything built on
// client-go; functions as wrappers that call client-go's; constants as
// constants; error variables as copies. The header of that file lists which
// names are listwatch's and what could not be re-exported as client-go
// declares it.
//
// # Usage
//
// Change the import path, nothing else:
//
//	import "github.com/listwatch/listwatch/clientgo/informers"
//
//	factory := informers.NewSharedInformerFactory(clientset, 10*time.Minute)
//
// Packages outside the covered ones (client-go's listers, typed informers,
// clientsets, tools/cache/synctrack...) keep their client-go import paths and
// work with this package's values, whose types are client-go's.
//
// # Concurrency
//
// Each name keeps the contract of the code behind it: a re-exported name is
// client-go's code and documented there; a listwatch drop-in documents its
// own and keeps client-go's (safe for concurrent use where client-go's is).
//
// # Testing
//
// hack/peer's client-go-rewritten suite (make peer) runs client-go's own
// tests of this package against it, with only their import paths rewritten;
// docs/testing.md, "Peer suites", says which tests it leaves out and why.
// make clientgo-check (part of make lint) fails when the generated file is
// stale or the package lacks a name client-go exports.
package informers
