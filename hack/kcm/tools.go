//go:build tools

// Package kcm is never built: its imports keep in go.mod (go mod tidy) the
// listwatch packages that build-kcm.sh's patched kube-controller-manager
// imports instead of client-go's. The binaries themselves are tool
// directives in go.mod.
package kcm

import (
	_ "github.com/listwatch/listwatch/clientgo/informers"
	_ "github.com/listwatch/listwatch/clientgo/metadata/metadatainformer"
)
