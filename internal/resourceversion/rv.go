// Package resourceversion is the one home of a resource version read as a number. A
// Kubernetes resource version is opaque text to most clients, but
// kube-apiserver issues decimal integers that grow with every write
// (etcd's revisions), and since KEP-5504 they may be compared: a watch
// delivers them in increasing order, a bookmark never goes back, and a
// barrier (informer.WaitForResourceVersion) compares the one it waits for
// with the one applied. Everything else (empty, signed, hexadecimal,
// anything a proxy or a fake made up) is not a number: it can neither be
// ordered nor resumed from.
package resourceversion

import "strconv"

// Parse reads rv as kube-apiserver issues them, a decimal integer that fits
// in 64 bits; ok is false for anything else, the empty string included.
// Zero parses: a list from the watch cache of an empty resource may say
// "0".
func Parse(rv string) (n uint64, ok bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}
