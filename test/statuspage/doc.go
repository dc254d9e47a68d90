// Package statuspage checks statuspage.Handler in a real browser: it
// serves the status page of running informers (one healthy, one whose
// requests are forbidden) on 127.0.0.1 and loads it in headless Chromium.
//
// # Usage
//
//	go test ./test/statuspage/
//	LISTWATCH_SCREENSHOT_DIR=/tmp/shots go test ./test/statuspage/ -v   # keep the screenshot
//
// The test needs /usr/bin/chromium (Debian's chromium package). Without it
// the test is skipped, unless LISTWATCH_REQUIRE_CHROMIUM is set, as .ci/run
// sets it after installing the package: then it fails, so that CI never
// skips it silently.
//
// # Concurrency
//
// The informers, the HTTP server and the browser run in real time (the
// browser is another process, so virtual time cannot be used). Nothing
// sleeps: the test waits for the healthy informer's sync and for the
// forbidden one's second failed attempt, and only the browser process is
// bounded by a deadline.
//
// # Testing
//
// The browser dumps the DOM (--dump-dom), which must hold each informer's
// row (by its id) with the right health class, and the forbidden one's
// reason; a second run takes a 1200x800 screenshot (--screenshot), which
// must be a non-empty PNG.
package statuspage
