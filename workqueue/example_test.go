package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/workqueue"
)

// A worker loop with retries: "b" fails twice and is retried with
// exponential backoff, then succeeds and is forgotten.
func Example() {
	ctx := context.Background()
	q := workqueue.New(ctx, workqueue.Options[string]{
		RateLimiter: workqueue.NewItemExponentialRateLimiter[string](time.Millisecond, time.Second),
	})
	failures := map[string]int{"b": 2}
	reconcile := func(key string) error {
		if failures[key] > 0 {
			failures[key]--
			return errors.New("transient")
		}
		return nil
	}

	q.Add("a")
	q.Add("b")
	for processed := 0; processed < 2; {
		key, shutdown := q.Get()
		if shutdown {
			break
		}
		if err := reconcile(key); err != nil {
			fmt.Printf("%s: %v, retry #%d\n", key, err, q.NumRequeues(key)+1)
			q.AddRateLimited(key)
		} else {
			fmt.Printf("%s: done\n", key)
			q.Forget(key)
			processed++
		}
		q.Done(key)
	}
	q.ShutDown()
	// Output:
	// a: done
	// b: transient, retry #1
	// b: transient, retry #2
	// b: done
}

// Priorities: the high-priority item jumps the queue.
func ExampleTyped_AddWithOptions() {
	q := workqueue.New(context.Background(), workqueue.Options[string]{})
	defer q.ShutDown()
	q.Add("routine")
	_ = q.AddWithOptions("urgent", workqueue.AddOptions{Priority: 10})
	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println(key)
		q.Done(key)
	}
	// Output:
	// urgent
	// routine
}
