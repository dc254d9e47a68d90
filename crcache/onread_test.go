package crcache_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/informer/statuspage"
	"github.com/listwatch/listwatch/ondemand"
)

var secretsResource = fake.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets"), Kind: "Secret", Namespaced: true}

func TestOnReadHoldsWhatIsRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secretsResource}})
		for i := range 10 {
			ns := []string{"a", "b"}[i%2]
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("s", i)}, Data: map[string][]byte{"k": []byte("v1")}}
			if _, err := srv.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		var built []string
		cfg, stopHTTP := fakeapi.Pipe(fakeapi.Handler(srv, fakeapi.Options{ReportError: func(err error) { t.Errorf("fakeapi: %v", err) }}))
		m := meta.NewDefaultRESTMapper(nil)
		for _, kind := range []string{"Secret", "SecretList"} {
			m.Add(corev1.SchemeGroupVersion.WithKind(kind), meta.RESTScopeNamespace)
		}
		page := crcache.NewStatusPage(statuspage.Options{})
		c, err := crcache.NewWithOptions(crcache.Options{
			StatusPage: page,
			OnRead:     []crcache.OnRead{{Object: &corev1.Secret{}, Budget: ondemand.Unlimited}},
			OnNewInformer: func(example runtime.Object, _ toolscache.SharedIndexInformer) {
				mu.Lock()
				defer mu.Unlock()
				built = append(built, fmt.Sprintf("%T", example))
			},
		})(cfg, cache.Options{Mapper: m})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(klog.NewContext(ctx, logr.Discard()))
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Start(runCtx) }()
		t.Cleanup(func() { cancel(); <-done; stopHTTP() })
		if !c.WaitForCacheSync(ctx) {
			t.Fatal("the cache did not sync")
		}

		var s corev1.Secret
		for range 3 {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "s0"}, &s); err != nil {
				t.Fatal(err)
			}
			if string(s.Data["k"]) != "v1" || s.Kind != "Secret" {
				t.Fatalf("Get = %+v", s)
			}
		}
		st, ok := crcache.OnReadStats(c, &corev1.Secret{})
		if !ok || st.Objects != 10 || st.Held != 1 || st.Fetches != 1 || st.Reads != 3 {
			t.Fatalf("after 3 reads of one Secret: %+v, %v; want 10 objects' metadata, 1 held, 1 fetch", st, ok)
		}
		// The status page's row of the metadata informer says what is
		// held whole, and its bytes count it.
		snaps := page.Snapshots()
		if len(snaps) != 1 || snaps[0].OnRead == nil {
			t.Fatalf("status page snapshots %+v; want the metadata informer's with OnRead", snaps)
		}
		if o := snaps[0].OnRead; o.Held != 1 || o.Fetches != 1 || o.HeldBytes != st.HeldBytes || snaps[0].Bytes < o.HeldBytes+1 {
			t.Fatalf("snapshot %+v, OnRead %+v; want 1 held of %d bytes, counted in Bytes", snaps[0], *o, st.HeldBytes)
		}
		rec := httptest.NewRecorder()
		page.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if !strings.Contains(rec.Body.String(), "1 held whole") {
			t.Fatalf("the status page does not show what is held whole:\n%s", rec.Body.String())
		}
		mu.Lock()
		if len(built) != 1 || built[0] != "*v1.PartialObjectMetadata" {
			t.Fatalf("informers built: %v; want the metadata one only", built)
		}
		mu.Unlock()

		// A change is read at its new version.
		s.Data["k"] = []byte("v2")
		s.ResourceVersion = ""
		if _, err := srv.Update(ctx, s.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		var pm metav1.PartialObjectMetadata
		pm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		for {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "s0"}, &pm); err != nil {
				t.Fatal(err)
			}
			if pm.ResourceVersion == srv.ResourceVersion() {
				break
			}
			synctest.Wait()
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "s0"}, &s); err != nil || string(s.Data["k"]) != "v2" {
			t.Fatalf("Get after the update: %q, %v", s.Data["k"], err)
		}

		var list corev1.SecretList
		if err := c.List(ctx, &list, client.InNamespace("b")); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 5 {
			t.Fatalf("List(b) = %d Secrets; want 5", len(list.Items))
		}
		for _, it := range list.Items {
			if string(it.Data["k"]) != "v1" {
				t.Fatalf("List gave %s without its data", it.Name)
			}
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "missing"}, &s); !apierrors.IsNotFound(err) {
			t.Fatalf("Get of a missing Secret: %v", err)
		}
		if _, err := c.GetInformer(ctx, &corev1.Secret{}); !errors.Is(err, crcache.ErrOnRead) {
			t.Fatalf("GetInformer(Secret): %v; want ErrOnRead", err)
		}
		if err := c.List(ctx, &list, client.MatchingFields{"metadata.name": "s1"}); err == nil {
			t.Fatal("a field selector on an OnRead list was accepted")
		}
	})
}
