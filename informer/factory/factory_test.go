package factory

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

func fakeSource(srv *fake.Server) func(Selection) cache.ListerWatcherWithContext {
	return func(s Selection) cache.ListerWatcherWithContext {
		return srv.ListerWatcher(fake.LWOptions{Resource: cmGVR, Namespace: s.Namespace,
			LabelSelector: s.LabelSelector, FieldSelector: s.FieldSelector})
	}
}

func TestFactorySharesStartsAndWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for _, ns := range []string{"a", "b"} {
			c := objects.ConfigMap("ns", "x", objects.Data("v", "0"))
			c.Namespace = ns
			c.Labels = map[string]string{"team": ns}
			srv.Create(t.Context(), c)
		}
		f := New(Options{})
		defer f.Shutdown()
		all, err := For(f, "configmaps", Selection{}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		again, _ := For(f, "configmaps", Selection{}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{})
		inA, _ := For(f, "configmaps", Selection{Namespace: "a"}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{})
		teamB, _ := For(f, "configmaps", Selection{LabelSelector: "team=b"}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{})
		if all != again || all == inA || all == teamB {
			t.Fatal("informers are shared by type, resource and selection only")
		}
		f.Start(t.Context())
		if err := f.WaitForCacheSync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if all.Reader().Len() != 2 || inA.Reader().Len() != 1 || teamB.Reader().Len() != 1 {
			t.Fatalf("lens = %d %d %d, want 2 1 1", all.Reader().Len(), inA.Reader().Len(), teamB.Reader().Len())
		}
		if got, _ := teamB.Reader().GetByKey("b/x"); got == nil {
			t.Fatal("label-selected informer lacks b/x")
		}
	})
}

func TestFactoryWaitSaysWhichAndWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		f := New(Options{})
		defer f.Shutdown()
		For(f, "configmaps", Selection{Namespace: "ok"}, fakeSource(srv), informer.Options[*corev1.ConfigMap]{})
		broken := func(Selection) cache.ListerWatcherWithContext {
			return &cache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtimeObject, error) {
					return nil, apierrors.NewForbidden(cmGVR.GroupResource(), "", errNoRBAC)
				},
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
					return nil, apierrors.NewForbidden(cmGVR.GroupResource(), "", errNoRBAC)
				},
			}
		}
		For(f, "secrets", Selection{}, broken, informer.Options[*corev1.ConfigMap]{})
		f.Start(t.Context())
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		err := f.WaitForCacheSync(ctx)
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "secrets") || strings.Contains(err.Error(), "configmaps in ok") {
			t.Fatalf("err = %v, want only the secrets informer, forbidden", err)
		}
		t.Log(err)
	})
}

type runtimeObject = runtime.Object

var errNoRBAC = errors.New("no RBAC")
