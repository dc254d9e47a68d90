package migration

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	"github.com/listwatch/listwatch/fake"
)

type counter interface {
	Run(ctx context.Context) error
	Counts() map[string]int
	Synced() bool
}

// All three — client-go, client-go code on listwatch's drop-in (the one
// import change), and the typed listwatch version — count the same pods.
func TestAllThreeCountTheSame(t *testing.T) {
	variants := map[string]func(ctx context.Context, lw *fake.ListerWatcher) counter{
		"client-go": func(_ context.Context, lw *fake.ListerWatcher) counter {
			return NewClientGoCounter(lw, cache.NewSharedIndexInformer)
		},
		"client-go code, listwatch drop-in": func(_ context.Context, lw *fake.ListerWatcher) counter {
			return NewClientGoCounter(lw, lwcache.NewSharedIndexInformer)
		},
		"listwatch typed": func(ctx context.Context, lw *fake.ListerWatcher) counter {
			c, err := NewCounter(ctx, lw)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	}
	for name, build := range variants {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := fake.NewTestServer(t, fake.Options{})
				ctx, cancel := context.WithCancel(t.Context())
				c := build(ctx, srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR}))
				done := make(chan struct{})
				go func() { defer close(done); _ = c.Run(ctx) }()
				defer func() { cancel(); <-done }()

				rnd := rand.New(rand.NewPCG(1, 2))
				var live []*corev1.Pod
				for i := range 200 {
					if len(live) > 0 && rnd.IntN(3) == 0 {
						j := rnd.IntN(len(live))
						srv.Delete(ctx, live[j])
						live = append(live[:j], live[j+1:]...)
						continue
					}
					pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("p", i)},
						Spec: corev1.PodSpec{NodeName: fmt.Sprint("node-", rnd.IntN(4))}}
					obj, err := srv.Create(ctx, pod)
					if err != nil {
						t.Fatal(err)
					}
					live = append(live, obj.(*corev1.Pod))
					time.Sleep(time.Millisecond)
				}
				time.Sleep(time.Second)
				synctest.Wait()

				want := map[string]int{}
				for n := range 4 {
					want[fmt.Sprint("node-", n)] = 0
				}
				for _, p := range live {
					want[p.Spec.NodeName]++
				}
				if got := c.Counts(); !maps.Equal(got, want) {
					t.Fatalf("counts = %v, want %v", got, want)
				}
			})
		})
	}
}
