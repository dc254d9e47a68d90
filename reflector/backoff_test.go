package reflector

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestBackoffBounds: the n-th consecutive delay lies in [b, b(1+jitter))
// where b = min(Initial·Factor^n, Max), and a failure after a quiet
// ResetAfter period starts again from Initial.
func TestBackoffBounds(t *testing.T) {
	for seed := range uint64(50) {
		cfg := BackoffConfig{}.withDefaults()
		b := backoff{cfg: cfg}
		r := rand.New(rand.NewPCG(seed, seed))
		now := t0
		base := cfg.Initial
		for i := range 12 {
			d := b.delay(now, r)
			if d < base || d >= 2*base {
				t.Fatalf("seed %d step %d: delay %v outside [%v, %v)", seed, i, d, base, 2*base)
			}
			now = now.Add(d)
			base = min(2*base, cfg.Max)
		}
		if d := b.delay(now.Add(cfg.ResetAfter), r); d >= 2*cfg.Initial {
			t.Fatalf("seed %d: delay %v after a quiet period, want < %v", seed, d, 2*cfg.Initial)
		}
	}
}

func TestBackoffNoJitter(t *testing.T) {
	b := backoff{cfg: BackoffConfig{Initial: time.Second, Max: 4 * time.Second, Jitter: -1}.withDefaults()}
	r := rand.New(rand.NewPCG(1, 1))
	var got []time.Duration
	for range 5 {
		got = append(got, b.delay(t0, r))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
}
