// Package b is linked from package a.
package b

// Thing does things.
type Thing struct{}

// Do does.
func (Thing) Do() {}
