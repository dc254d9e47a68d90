// Package hostile holds the hostile-server suite: an in-memory API server
// that misbehaves in every way a proxy, an aggregated API server or a bug
// can (closing watches at once, a bookmark then a close, streams cut before
// their end bookmark or never sending it, repeated continue tokens, lists
// and events with malformed resource versions, unkeyable items, wrong-typed
// objects, replays, 410/429/500/403, a bookmark from the far future on a
// quiet watch), and property tests that run listwatch's informer against
// it under testing/synctest.
//
// # Usage
//
//	go test ./test/hostile/            # 1,000 random schedules and every forced behaviour
//	go test -short ./test/hostile/     # 100 schedules
//	go test ./test/hostile/ -run 'TestInformerHostileSchedules' -seed 42
//
// # Concurrency
//
// Each schedule runs in its own synctest bubble: virtual time, no sleeps
// outside the bubble, every goroutine ended before the bubble returns.
//
// # Testing
//
// The properties are stated on TestInformerHostileSchedules (informer_test.go): the server
// never sees more requests than the backoff schedule permits, and once the
// server behaves the cache and every handler's view equal the server.
// TestFarFutureResourceVersion (future_test.go) checks that a resource
// version from the far future, which a quiet watch cannot tell from a real
// one, is caught by Informer.Fresh (which relists) and refused by
// WaitForResourceVersion.
package hostile
