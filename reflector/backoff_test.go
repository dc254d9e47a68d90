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
		cfg := Backoff{}.withDefaults()
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
	b := backoff{cfg: Backoff{Initial: time.Second, Max: 4 * time.Second, Jitter: -1}.withDefaults()}
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

// TestBackoffPolicy: the shared policy's pure parts. Delay is the
// schedule min(Initial·Factor^(n-1), Max) (its floor without a random
// source), Next starts a new run only after ResetAfter (never when it is
// zero, the RetryWatcher's default), and WithDefaults fills only what is
// unset, folding the former Cap into Max.
func TestBackoffPolicy(t *testing.T) {
	b := Backoff{Initial: 500 * time.Millisecond, Max: 3 * time.Second, Factor: 2, Jitter: 1}
	var got []time.Duration
	for n := 1; n <= 5; n++ {
		got = append(got, b.Delay(n, nil))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("floors %v, want %v", got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	for n := 1; n <= 5; n++ {
		if d := b.Delay(n, r); d < want[n-1] || d >= 2*want[n-1] {
			t.Fatalf("Delay(%d) = %v outside [%v, %v)", n, d, want[n-1], 2*want[n-1])
		}
	}
	if d := (Backoff{Initial: time.Second, Max: 500 * time.Millisecond, Factor: 2}).Delay(3, nil); d != 500*time.Millisecond {
		t.Errorf("Max below Initial: Delay = %v, want Max", d)
	}

	if n := b.Next(7, t0, t0.Add(time.Hour)); n != 8 {
		t.Errorf("Next without ResetAfter = %d, want 8", n)
	}
	b.ResetAfter = time.Minute
	if n := b.Next(7, t0, t0.Add(59*time.Second)); n != 8 {
		t.Errorf("Next before ResetAfter = %d, want 8", n)
	}
	if n := b.Next(7, t0, t0.Add(time.Minute)); n != 1 {
		t.Errorf("Next after ResetAfter = %d, want 1", n)
	}
	if n := b.Next(0, time.Time{}, t0); n != 1 {
		t.Errorf("first Next = %d, want 1", n)
	}

	def := Backoff{Initial: time.Second, Max: time.Minute, Factor: 3, Jitter: 0.5, ResetAfter: time.Hour, Slow: 2 * time.Minute}
	if got := (Backoff{}).WithDefaults(def); got != def {
		t.Errorf("zero WithDefaults = %+v, want %+v", got, def)
	}
	got2 := Backoff{Initial: 2 * time.Second, Max: 10 * time.Second, Factor: 0.5, Jitter: -1}.WithDefaults(def)
	want2 := Backoff{Initial: 2 * time.Second, Max: 10 * time.Second, Factor: 3, Jitter: 0, ResetAfter: time.Hour, Slow: 2 * time.Minute}
	if got2 != want2 {
		t.Errorf("WithDefaults = %+v, want %+v", got2, want2)
	}
	if got := (Backoff{Slow: -1}).withDefaults().Slow; got != 0 {
		t.Errorf("a negative Slow gives %v, want none", got)
	}
	if got := (Backoff{Max: time.Minute}).withDefaults().Slow; got != time.Minute {
		t.Errorf("a zero Slow gives %v, want Max", got)
	}
}
