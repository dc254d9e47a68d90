package informers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/informers"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/ondemand"
)

func TestWithOnReadListerFetchesWholeObjects(t *testing.T) {
	ctx := t.Context()
	secrets := fake.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets"), Kind: "Secret", Namespaced: true}
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
	for i := range 6 {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: []string{"a", "b"}[i%2], Name: fmt.Sprint("s", i)},
			Data: map[string][]byte{"k": []byte(fmt.Sprint("v", i))}}
		if _, err := srv.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fakeapi.ServeTest(t, srv, fakeapi.Options{})
	cfg.QPS = -1
	cs := kubernetes.NewForConfigOrDie(cfg)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithOnRead(&corev1.Secret{}, informers.OnRead{Budget: ondemand.Unlimited}))
	inf := f.Core().V1().Secrets().Informer()
	lister := f.Core().V1().Secrets().Lister()
	runCtx, cancel := context.WithCancel(ctx)
	f.Start(runCtx.Done())
	defer f.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	if keys := inf.GetIndexer().ListKeys(); len(keys) != 6 {
		t.Fatalf("%d keys; want every Secret's metadata", len(keys))
	}
	s, err := lister.Secrets("a").Get("s2")
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["k"]) != "v2" {
		t.Fatalf("lister Get = %q; want the whole Secret", s.Data["k"])
	}
	if _, err := lister.Secrets("a").Get("missing"); err == nil {
		t.Fatal("Get of a missing Secret succeeded")
	}
	list, err := lister.Secrets("b").List(labels.Everything())
	if err != nil || len(list) != 3 {
		t.Fatalf("lister List(b) = %d, %v; want 3", len(list), err)
	}
	for _, s := range list {
		if len(s.Data["k"]) == 0 {
			t.Fatalf("List gave %s without its data", s.Name)
		}
	}
	all, err := lister.List(labels.Everything())
	if err != nil || len(all) != 6 {
		t.Fatalf("lister List() = %d, %v; want 6", len(all), err)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{}); !errors.Is(err, informers.ErrOnRead) {
		t.Fatalf("AddEventHandler: %v; want ErrOnRead", err)
	}
}
