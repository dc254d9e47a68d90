// Package integration tests restsource against a real kube-apiserver
// (internal/testing/testapiserver): a listwatch informer and a client-go informer
// on restsource must mirror the server, and lists, watches, bookmarks and
// 410 errors must equal the clientset's. It is a separate package so that
// restsource's own tests do not depend on the informer packages. The
// tests are skipped under go test -short.
package integration
