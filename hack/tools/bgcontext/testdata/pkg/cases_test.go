package pkg

import (
	stdctx "context"
	"testing"
)

func TestFlagged(t *testing.T) {
	_ = stdctx.Background() // want
	go func() {
		_ = stdctx.TODO() // want
	}()
	t.Run("sub", func(st *testing.T) {
		_ = stdctx.Background() // want st
	})
}

func BenchmarkFlagged(b *testing.B) {
	_ = stdctx.Background() // want b
}

func FuzzFlagged(f *testing.F) {
	_ = stdctx.Background() // want f
}

func helper(tb testing.TB) {
	_ = stdctx.Background() // want tb
}

func TestAllowed(t *testing.T) {
	_ = stdctx.Background() //lint:allow-background the server outlives the test
	//lint:allow-background handed to a goroutine that ends after the test
	_ = stdctx.Background()
	_ = stdctx.Background() //lint:allow-background
	// want (above: a directive without a reason allows nothing)
	t.Cleanup(func() {
		_ = stdctx.Background() // t.Context() is cancelled here
	})
	_ = t.Context()
}

func TestUnnamed(*testing.T) {
	_ = stdctx.Background() // no name to call Context on
}

func ExampleSomething() {
	_ = stdctx.Background()
}

func noTest() {
	_ = stdctx.Background()
}

func TestMain(m *testing.M) {
	_ = stdctx.Background()
}
