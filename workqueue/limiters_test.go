package workqueue

import (
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	cgworkqueue "k8s.io/client-go/util/workqueue"
)

func whens(l RateLimiter[string], item string, n int) []time.Duration {
	var got []time.Duration
	for range n {
		got = append(got, l.When(item))
	}
	return got
}

func expectDelays(t *testing.T, got []time.Duration, want ...time.Duration) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("delays = %v, want %v", got, want)
	}
}

func TestItemExponentialRateLimiter(t *testing.T) {
	l := NewItemExponentialRateLimiter[string](time.Millisecond, 10*time.Millisecond)
	expectDelays(t, whens(l, "a", 6), 1*time.Millisecond, 2*time.Millisecond, 4*time.Millisecond,
		8*time.Millisecond, 10*time.Millisecond, 10*time.Millisecond)
	expectDelays(t, whens(l, "b", 2), time.Millisecond, 2*time.Millisecond)
	if n := l.NumRequeues("a"); n != 6 {
		t.Fatalf("NumRequeues(a) = %d, want 6", n)
	}
	l.Forget("a")
	if n := l.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d", n)
	}
	expectDelays(t, whens(l, "a", 1), time.Millisecond)
}

// TestItemExponentialMatchesClientGo compares delays with client-go's
// limiter, including many failures and odd parameters. client-go's float
// arithmetic overflows at exactly 2^63 ns (base 1ns, 63rd failure) and
// returns a negative delay; ours returns the cap there, so the comparison
// skips client-go's negative results and checks ours against the cap.
func TestItemExponentialMatchesClientGo(t *testing.T) {
	params := [][2]time.Duration{
		{time.Nanosecond, time.Hour}, {5 * time.Millisecond, 1000 * time.Second},
		{0, time.Second}, {time.Second, 0}, {3, 1<<63 - 1},
	}
	for _, p := range params {
		ours := NewItemExponentialRateLimiter[string](p[0], p[1])
		theirs := cgworkqueue.NewTypedItemExponentialFailureRateLimiter[string](p[0], p[1])
		for i := range 200 {
			a, b := ours.When("x"), theirs.When("x")
			if b < 0 && p[1] > 0 {
				if a != p[1] {
					t.Fatalf("base %v max %v failure %d: %v, want the cap", p[0], p[1], i, a)
				}
				continue
			}
			if a != b {
				t.Fatalf("base %v max %v failure %d: %v, client-go %v", p[0], p[1], i, a, b)
			}
		}
	}
}

func TestItemFastSlowRateLimiter(t *testing.T) {
	l := NewItemFastSlowRateLimiter[string](time.Millisecond, time.Second, 2)
	expectDelays(t, whens(l, "a", 4), time.Millisecond, time.Millisecond, time.Second, time.Second)
	if n := l.NumRequeues("a"); n != 4 {
		t.Fatalf("NumRequeues = %d, want 4", n)
	}
	l.Forget("a")
	expectDelays(t, whens(l, "a", 1), time.Millisecond)
}

func TestBucketRateLimiter(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	l := NewBucketRateLimiter[string](10, 2, c)
	expectDelays(t, whens(l, "a", 4), 0, 0, 100*time.Millisecond, 200*time.Millisecond)
	c.SetTime(c.Now().Add(time.Second))
	expectDelays(t, whens(l, "b", 1), 0)
	if l.NumRequeues("a") != 0 {
		t.Fatal("bucket tracks items")
	}
	l.Forget("a")
	expectDelays(t, whens(NewBucketRateLimiter[string](0, 0, c), "a", 3), 0, 0, 0)
	expectDelays(t, whens(NewBucketRateLimiter[string](1, 0, c), "a", 2), 0, time.Second)
}

func TestMaxOfAndWithMaxWait(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	l := NewMaxOfRateLimiter(
		NewItemExponentialRateLimiter[string](time.Millisecond, time.Second),
		NewItemFastSlowRateLimiter[string](0, 50*time.Millisecond, 3),
		NewBucketRateLimiter[string](1, 1, c),
	)
	expectDelays(t, whens(l, "a", 5), time.Millisecond, time.Second, 2*time.Second, 3*time.Second, 4*time.Second)
	if n := l.NumRequeues("a"); n != 5 {
		t.Fatalf("NumRequeues = %d, want 5", n)
	}
	l.Forget("a")
	if n := l.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d", n)
	}
	capped := NewWithMaxWaitRateLimiter[string](NewItemExponentialRateLimiter[string](time.Second, time.Hour), 3*time.Second)
	expectDelays(t, whens(capped, "a", 3), time.Second, 2*time.Second, 3*time.Second)
	if capped.NumRequeues("a") != 3 {
		t.Fatal("WithMaxWait hides NumRequeues")
	}
	expectDelays(t, whens(NewMaxOfRateLimiter[string](), "a", 1), 0)
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	l := DefaultControllerRateLimiter[string]()
	expectDelays(t, whens(l, "a", 3), 5*time.Millisecond, 10*time.Millisecond, 20*time.Millisecond)
	if n := l.NumRequeues("a"); n != 3 {
		t.Fatalf("NumRequeues = %d, want 3", n)
	}
}

// TestLimitersInterchangeable: ours drive client-go's queue and theirs ours.
func TestLimitersInterchangeable(t *testing.T) {
	var theirs cgworkqueue.TypedRateLimiter[string] = NewItemExponentialRateLimiter[string](1, 2)
	var ours RateLimiter[string] = cgworkqueue.DefaultTypedControllerRateLimiter[string]()
	q := New(t.Context(), Options[string]{RateLimiter: ours})
	defer q.ShutDown()
	cq := cgworkqueue.NewTypedRateLimitingQueue(theirs)
	defer cq.ShutDown()
	q.AddRateLimited("a")
	cq.AddRateLimited("a")
	if q.NumRequeues("a") != 1 || cq.NumRequeues("a") != 1 {
		t.Fatal("limiter not used")
	}
}
