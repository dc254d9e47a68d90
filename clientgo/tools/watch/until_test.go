package watch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/listwatch/fake"
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

// server is a fake apiserver holding ConfigMaps o0..o9 (resource versions
// 1..10), and its lister-watcher.
func server(t *testing.T) (*fake.Server, *fake.ListerWatcher) {
	srv := fake.NewTestServer(t, fake.Options{})
	for i := range 10 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("o%d", i)}}
		if _, err := srv.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	return srv, srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR})
}

// touch updates o<i>, giving it the next resource version.
func touch(t *testing.T, srv *fake.Server, i int) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("o%d", i)},
		Data: map[string]string{"n": strconv.Itoa(i)}}
	if _, err := srv.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
}

// Until follows the watch across cuts (every watch here closes after three
// events) until each condition in turn is met.
func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := server(t)
		if err := srv.InjectWatchFault(fake.WatchFault{CloseAfterEvents: 3}); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			touch(t, srv, i)
		}
		ev, err := Until(t.Context(), "10", lw, rvIs("13"), rvIs("19"))
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.Object.(*corev1.ConfigMap).ResourceVersion; got != "19" {
			t.Fatalf("last event rv = %s, want 19", got)
		}
	})
}

func TestUntilWithSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, lw := server(t)
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
		if err != nil || ev.Object.(*corev1.ConfigMap).ResourceVersion != "6" {
			t.Fatalf("got %v, %v", ev, err)
		}
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

// NewRetryWatcher (client-go's deprecated constructor) returns listwatch's
// RetryWatcher, which follows the watch until Stop.
func TestNewRetryWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, lw := server(t)
		var rw *RetryWatcher
		rw, err := NewRetryWatcher("10", lw)
		if err != nil {
			t.Fatal(err)
		}
		touch(t, srv, 3)
		ev := <-rw.ResultChan()
		if got := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Modified || got.Name != "o3" || got.ResourceVersion != "11" {
			t.Fatalf("event %s %s@%s, want MODIFIED o3@11", ev.Type, got.Name, got.ResourceVersion)
		}
		rw.Stop()
		<-rw.Done()
	})
}
