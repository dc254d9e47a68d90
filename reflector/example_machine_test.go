package reflector_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"
)

// The machine alone: inputs in, effects out, no I/O and no clock.
func ExampleMachine() {
	m, _ := reflector.NewMachine(reflector.Config[*corev1.Pod]{
		WatchList: reflector.WatchListOff,
		Rand:      rand.New(rand.NewPCG(1, 2)), // deterministic jitter and timeouts
	})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	show := func(effects []reflector.Effect) {
		for _, e := range effects {
			fmt.Println(" ", e)
		}
	}
	fmt.Println("start:")
	show(m.Start(now))
	a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "10"}}
	fmt.Println("page:")
	show(m.Step(now, reflector.ListPage{Items: []runtime.Object{a}, ResourceVersion: "10"}))
	show(m.Step(now, reflector.WatchOpened{}))
	fmt.Println("410 in the watch:")
	gone := apierrors.NewResourceExpired("too old").Status()
	show(m.Step(now, reflector.WatchEvent{Event: watch.Event{Type: watch.Error, Object: &gone}}))
	at, _ := m.Deadline()
	fmt.Println("after the backoff:")
	show(m.Step(at, reflector.Tick{}))
	fmt.Println(m.Status().Phase, m.Status().Reason)
	// Output:
	// start:
	//   list rv="0" limit=500
	// page:
	//   replace rv=10 items=(a)
	//   watch rv="10" bookmarks timeout=502s
	// 410 in the watch:
	//   stop-watch
	//   error Expired: too old
	//   sleep 1.169s
	// after the backoff:
	//   list rv="10"
	// listing Expired
}
