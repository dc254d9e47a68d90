// Package controllertest shows how to test a controller with listwatch's fake
// apiserver: real list/watch semantics (resource versions, selectors,
// bookmarks, 410 after compaction), faults on demand, and a convergence
// check with a readable diff — all under testing/synctest, so no test
// sleeps for real.
//
// The test file is the example: read controller_test.go.
package controllertest
