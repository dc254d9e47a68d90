package crcache_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/listwatch/listwatch/crcache"
	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// plainConfigMap is a Go type of its own for ConfigMaps, which the
// cache cannot decode itself (it is not client-go's): controller-runtime's
// client lists and watches it.
type plainConfigMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              map[string]string `json:"data,omitempty"`
}

type plainConfigMapList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []plainConfigMap `json:"items"`
}

func (c *plainConfigMap) DeepCopyObject() runtime.Object {
	out := *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Data = maps.Clone(c.Data)
	return &out
}

func (l *plainConfigMapList) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]plainConfigMap, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*plainConfigMap)
	}
	return &out
}

// plainScheme has client-go's Pods and plainConfigMap as ConfigMaps.
func plainScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	gv := corev1.SchemeGroupVersion
	s.AddKnownTypes(gv, &corev1.Pod{}, &corev1.PodList{})
	s.AddKnownTypeWithName(gv.WithKind("ConfigMap"), &plainConfigMap{})
	s.AddKnownTypeWithName(gv.WithKind("ConfigMapList"), &plainConfigMapList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}

// plainServer serves a Pod and a ConfigMap in each of the namespaces a
// and b over an in-memory connection, rejecting streaming lists (as a
// server without them), so that every list cycle is a paginated list,
// which client-go's REST client rate-limits. lists returns the times of
// the lists served so far, by path.
func plainServer(t *testing.T) (srv *fake.Server, cfg *rest.Config, lists func() map[string][]time.Time) {
	srv = fake.NewTestServer(t, fake.Options{})
	for _, ns := range []string{"a", "b"} {
		for _, obj := range []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		} {
			if _, err := srv.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	served := map[string][]time.Time{}
	h := fakeapi.Handler(srv, fakeapi.Options{ReportError: func(err error) { t.Errorf("fakeapi: %v", err) }})
	cfg, stop := fakeapi.Pipe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("sendInitialEvents") == "true" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"no streaming lists"}`)
			return
		}
		if q.Get("watch") != "true" {
			mu.Lock()
			served[r.URL.Path] = append(served[r.URL.Path], time.Now())
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(stop)
	return srv, cfg, func() map[string][]time.Time {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]time.Time{}
		for p, ts := range served {
			out[p] = slices.Clone(ts)
		}
		return out
	}
}

// startPlainCache starts a cache of Pods (decoded by restsource) and
// plainConfigMaps (through controller-runtime's client, listed in
// Options.ClientDecoded) in namespaces a
// and b, over cfg, and waits for its sync.
func startPlainCache(t *testing.T, cfg *rest.Config, o crcache.Options) cache.Cache {
	o.Logger = logr.Discard()
	o.ClientDecoded = []client.Object{&plainConfigMap{}}
	c, err := crcache.NewWithOptions(o)(cfg, cache.Options{Scheme: plainScheme(), Mapper: mapper(),
		DefaultNamespaces: map[string]cache.Config{"a": {}, "b": {}}})
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c, "")
	// Both informers at once, then the wait for their syncs (which
	// waits for the cache to start, as GetInformer does not).
	for _, obj := range []client.Object{&corev1.Pod{}, &plainConfigMap{}} {
		if _, err := c.GetInformer(t.Context(), obj, cache.BlockUntilSynced(false)); err != nil {
			t.Fatal(err)
		}
	}
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatal("the cache did not sync")
	}
	return c
}

// countingLimiter counts the tokens taken, and never waits.
type countingLimiter struct {
	flowcontrol.RateLimiter
	mu    sync.Mutex
	taken int
}

func (l *countingLimiter) Wait(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.taken++
	return nil
}

// Probes take no client-side rate-limiter token, and real requests wait
// where they waited before. With the config's QPS and Burst (a token
// every 1024 s, Burst 1), each client keeps a bucket of its own: every
// informer's first list, restsource's and controller-runtime's client's,
// is served at once (one shared bucket would have made all but one wait),
// and the relists of both plainConfigMap informers after a 410 wait
// exactly 1024 s, each on its own bucket. With the config's RateLimiter,
// shared by every client, the tokens taken are exactly the lists served
// (the Pods' probes took one each before). TestProbeLimiter shows a probe
// taking none from an informer's own bucket, which a fallback informer
// lists with after a probe (sharding probes every ListWatch).
func TestProbesTakeNoToken(t *testing.T) {
	t.Run("own buckets", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			t.Context() // the cache and the server stop before the bubble ends
			start := time.Now()
			srv, cfg, lists := plainServer(t)
			cfg.QPS, cfg.Burst = 1.0/1024, 1
			startPlainCache(t, cfg, crcache.Options{})
			if err := srv.FailNext(fake.Failure{Resource: fake.ConfigMaps().GVR, Verbs: fake.VerbWatch, Kind: fake.Expired, Times: 2}); err != nil {
				t.Fatal(err)
			}
			srv.CloseWatches(fake.ConfigMaps().GVR)
			time.Sleep(time.Hour)
			synctest.Wait()
			got := map[string][]time.Duration{}
			for p, ts := range lists() {
				for _, at := range ts {
					got[p] = append(got[p], at.Sub(start).Round(time.Millisecond))
				}
			}
			relist := 1024 * time.Second
			want := map[string][]time.Duration{
				"/api/v1/namespaces/a/pods":       {0},
				"/api/v1/namespaces/b/pods":       {0},
				"/api/v1/namespaces/a/configmaps": {0, relist},
				"/api/v1/namespaces/b/configmaps": {0, relist},
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("lists served at\n%v\nwant\n%v", got, want)
			}
		})
	})
	t.Run("shared limiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, cfg, lists := plainServer(t)
			l := &countingLimiter{}
			cfg.RateLimiter = l
			startPlainCache(t, cfg, crcache.Options{})
			served := 0
			for _, ts := range lists() {
				served += len(ts)
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			if served != 4 || l.taken != served {
				t.Errorf("%d tokens taken, %d lists served; want 4 of each", l.taken, served)
			}
		})
	})
}
