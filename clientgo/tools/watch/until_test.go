package retrywatcher

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func rvIs(rv string) ConditionFunc {
	return func(ev watch.Event) (bool, error) {
		acc, ok := ev.Object.(metav1.Object)
		return ok && acc.GetResourceVersion() == rv, nil
	}
}

func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &logServer{base: 10, cutAfter: 3}
		srv.record(10)
		lw := &cache.ListWatch{WatchFuncWithContext: srv.WatchWithContext}
		ev, err := Until(t.Context(), "10", lw, rvIs("13"), rvIs("19"))
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.Object.(*corev1.ConfigMap).ResourceVersion; got != "19" {
			t.Fatalf("last event rv = %s, want 19", got)
		}
		srv.wg.Wait()
	})
}

func TestUntilWithSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &logServer{base: 10}
		srv.record(10)
		lw := &cache.ListWatch{ListWithContextFunc: srv.ListWithContext, WatchFuncWithContext: srv.WatchWithContext}
		// The precondition sees the listed objects.
		stop := errors.New("stop")
		_, err := UntilWithSync(t.Context(), lw, &corev1.ConfigMap{}, func(s cache.Store) (bool, error) {
			if n := len(s.List()); n != 10 {
				t.Errorf("precondition saw %d objects, want 10", n)
			}
			return false, stop
		})
		if !errors.Is(err, stop) {
			t.Fatalf("err = %v, want the precondition's", err)
		}
		// Conditions see ADDED for each listed object first.
		ev, err := UntilWithSync(t.Context(), lw, &corev1.ConfigMap{}, nil, func(ev watch.Event) (bool, error) {
			return ev.Type == watch.Added && ev.Object.(*corev1.ConfigMap).Name == "o5", nil
		})
		if err != nil || ev.Object.(*corev1.ConfigMap).ResourceVersion != "15" {
			t.Fatalf("got %v, %v", ev, err)
		}
		srv.wg.Wait()
	})
}

// TestUntilWithSyncGivesUpOnAHangingList: a list that ignores its context
// does not hold UntilWithSync past ctx's end (client-go's
// TestUntilWithSync cases "doesn't wait for sync with no precondition" and
// "waits indefinitely with precondition if it can't sync").
func TestUntilWithSyncGivesUpOnAHangingList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		lw := &cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				<-release // ignores its context
				return nil, errors.New("released")
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return nil, errors.New("unused")
			},
		}
		cond := func(watch.Event) (bool, error) { return false, nil }
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := UntilWithSync(ctx, lw, &corev1.ConfigMap{}, nil, cond); !wait.Interrupted(err) {
			t.Errorf("no precondition: err = %v, want wait.ErrorInterrupted", err)
		}
		ctx2, cancel2 := context.WithTimeout(t.Context(), time.Second)
		defer cancel2()
		pre := func(cache.Store) (bool, error) { return false, nil }
		_, err := UntilWithSync(ctx2, lw, &corev1.ConfigMap{}, pre, cond)
		if err == nil || err.Error() != "UntilWithSync: unable to sync caches: context deadline exceeded" {
			t.Errorf("with a precondition: err = %v", err)
		}
		close(release)
	})
}
