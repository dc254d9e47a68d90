package retrywatcher

import (
	"errors"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
