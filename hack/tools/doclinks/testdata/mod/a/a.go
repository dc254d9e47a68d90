// Package a links to [Foo], [Bar.Baz], [Bar.Run], [b.Thing], [b.Thing.Do],
// [Wrapped.Anything] and [fmt.Nothing] (outside the module: not checked),
// but [Gone], [Bar.Missing], [b.Gone] and [b.Thing.Gone] name nothing.
package a

import "example.com/mod/b"

// Foo is also checked in a list:
//   - [Nope] names nothing.
func Foo() {}

// Bar has a field and a method.
type Bar struct{ Baz int }

// Run runs.
func (*Bar) Run() {}

// Wrapped embeds b.Thing, whose promoted names are not known.
type Wrapped struct{ b.Thing }

var _ = b.Thing{}
