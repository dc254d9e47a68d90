package fake

import "testing"

// NewTestServer is NewServer for tests: it fails tb on bad options and, when
// the test ends, closes every watch still open so that their goroutines end
// (a watch whose client neither reads nor stops it is otherwise left
// blocked, as with a real connection).
func NewTestServer(tb testing.TB, opts Options) *Server {
	tb.Helper()
	srv, err := NewServer(opts)
	if err != nil {
		tb.Fatalf("fake.NewServer: %v", err)
	}
	tb.Cleanup(func() { srv.CloseWatches(GVR{}) })
	return srv
}
