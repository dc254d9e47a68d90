package reconciler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
)

// Sources churn (created, relabelled, deleted) while every 7th write of the
// controller fails; once the churn stops, every source has an up-to-date
// mirror and no mirror is orphaned.
func TestMirrorsConvergeUnderChurnAndFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		gvr := fake.ConfigMaps().GVR
		inf, err := informer.New(informer.Options[*corev1.ConfigMap]{Source: srv.ListerWatcher(fake.LWOptions{Resource: gvr})})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		c, err := New(ctx, Options{Informer: inf, Writer: &FakeWriter{Server: srv, FailEvery: 7}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { _ = inf.Run(ctx) })
		wg.Go(func() { c.Run(ctx, 4) })
		defer func() { cancel(); wg.Wait() }()

		n := 0
		churn, err := fake.NewChurn(srv, fake.ChurnOptions{Resource: gvr, Seed: 1, Namespaces: []string{"a", "b"},
			NewObject: func(ns, name string) runtime.Object {
				n++
				return &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{SourceLabel: fmt.Sprint(n%3 != 0)}},
					Data:       map[string]string{"n": fmt.Sprint(n)},
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if err := churn.Steps(ctx, 10); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			if err := inf.WaitForResourceVersion(ctx, srv.ResourceVersion()); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			bad := Check(inf.Reader())
			if len(bad) == 0 && c.queue.Len() == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not converged after a minute: %v", bad)
			}
			time.Sleep(time.Second)
		}
		reconciles, retries := c.Counts()
		if retries == 0 {
			t.Fatal("no write failed, so retries were not exercised")
		}
		t.Logf("%d objects, %d reconciles, %d retries", inf.Reader().Len(), reconciles, retries)
	})
}
