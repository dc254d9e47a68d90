package informers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
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

// With MetadataHandlers, the informer's handlers are given every object's
// metadata, never a whole Secret, and the lister still reads whole ones.
func TestWithOnReadMetadataHandlers(t *testing.T) {
	ctx := t.Context()
	secrets := fake.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets"), Kind: "Secret", Namespaced: true}
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
	for i := range 4 {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprint("s", i)}, Data: map[string][]byte{"k": []byte("v")}}
		if _, err := srv.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fakeapi.ServeTest(t, srv, fakeapi.Options{})
	cfg.QPS = -1
	f := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0,
		informers.WithOnRead(&corev1.Secret{}, informers.OnRead{Budget: ondemand.Unlimited, MetadataHandlers: true}))
	inf := f.Core().V1().Secrets().Informer()
	var mu sync.Mutex
	var got []string
	record := func(verb string, obj any) {
		mu.Lock()
		defer mu.Unlock()
		if u, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = u.Obj
		}
		got = append(got, fmt.Sprintf("%s %T %s", verb, obj, obj.(metav1.Object).GetName()))
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", obj) },
		UpdateFunc: func(_, obj any) { record("update", obj) },
		DeleteFunc: func(obj any) { record("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	f.Start(runCtx.Done())
	defer f.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	if _, err := srv.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "s0"}}); err != nil {
		t.Fatal(err)
	}
	_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 5, nil
	}) // what it waited for is checked below
	mu.Lock()
	sort.Strings(got[:4])
	want := []string{"add *v1.PartialObjectMetadata s0", "add *v1.PartialObjectMetadata s1", "add *v1.PartialObjectMetadata s2",
		"add *v1.PartialObjectMetadata s3", "delete *v1.PartialObjectMetadata s0"}
	if !slices.Equal(got, want) {
		t.Fatalf("handler calls\n  %q\nwant\n  %q", got, want)
	}
	mu.Unlock()
	s, err := f.Core().V1().Secrets().Lister().Secrets("a").Get("s1")
	if err != nil || string(s.Data["k"]) != "v" {
		t.Fatalf("lister Get = %v, %v; want the whole Secret", s, err)
	}
}
