package sharded_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/listwatch/listwatch/examples/sharded"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/shard"
)

func TestContentHash(t *testing.T) {
	a := sharded.ContentHash(map[string]string{"a": "1", "b": "2"})
	if b := sharded.ContentHash(map[string]string{"b": "2", "a": "1"}); a != b {
		t.Errorf("order matters: %s, %s", a, b)
	}
	if b := sharded.ContentHash(map[string]string{"a": "1b", "": "2"}); a == b {
		t.Error("keys and values are not separated")
	}
	if len(a) != 16 || sharded.ContentHash(nil) == a {
		t.Errorf("hash %q", a)
	}
}

// TestTwoReplicasSplitTheWork runs two replicas in one process on the fake
// clientset: every ConfigMap ends reconciled at its content (one that
// changes after the ring settled, by its owner), and each replica's
// handlers end up holding exactly its own keys. (A replica that starts
// before it sees the other owns everything for a moment: what it
// reconciled then stays marked with its name.)
func TestTwoReplicasSplitTheWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ns = "demo"
		cs := fake.NewClientset()
		ctx, cancel := context.WithCancel(t.Context())
		for i := range 40 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%02d", i), UID: uuid.NewUUID()},
				Data: map[string]string{"v": fmt.Sprint(i)}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		added := map[string]map[string]bool{"a": {}, "b": {}} // key → held by a replica's handlers
		var wg sync.WaitGroup
		for _, id := range []string{"a", "b"} {
			c, err := sharded.New(ctx, sharded.Options{Client: cs, Namespace: ns, Ring: "cms", Identity: id, Slices: 64,
				WatchList: reflector.WatchListOff, StatsInterval: time.Minute,
				Events: func(e sharded.Event) {
					mu.Lock()
					defer mu.Unlock()
					switch e.Ev {
					case "add":
						added[id][e.Key] = true
					case "drop", "del":
						delete(added[id], e.Key)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				if err := c.Run(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		a := shard.MustAssign([]string{"a", "b"}, shard.Options{Slices: 64})
		changed := ""
		check := func() error {
			l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, cm := range l.Items {
				owner := a.OwnerOfKey(string(cm.UID))
				if got := cm.Annotations[sharded.HashAnnotation]; got != sharded.ContentHash(cm.Data) {
					return fmt.Errorf("%s reconciled at %q", cm.Name, got)
				}
				if by := cm.Annotations[sharded.ByAnnotation]; (cm.Name == changed && by != owner) || (by != "a" && by != "b") {
					return fmt.Errorf("%s reconciled by %q, owner %q", cm.Name, by, owner)
				}
			}
			return nil
		}
		settle := func() error {
			var err error
			for range 100 { // virtual time: the informers, the Members and the queues settle
				synctest.Wait()
				if err = check(); err == nil {
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			return err
		}
		if err := settle(); err != nil {
			t.Fatal(err)
		}
		changed = "cm-07"
		patch := []byte(`{"data":{"v":"changed"}}`)
		if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "cm-07", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := settle(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		for id, keys := range added {
			for k := range keys {
				cm, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, k, metav1.GetOptions{})
				if owner := a.OwnerOfKey(string(cm.UID)); owner != id {
					t.Errorf("%s's handlers got %s, owned by %s", id, k, owner)
				}
			}
		}
		if len(added["a"])+len(added["b"]) != 40 || len(added["a"]) == 0 || len(added["b"]) == 0 {
			t.Errorf("handlers got %d and %d keys", len(added["a"]), len(added["b"]))
		}
		mu.Unlock()
		cancel()
		wg.Wait()
	})
}
