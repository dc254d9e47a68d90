package cache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// runController runs c until the test ends and waits until it has synced
// and the bubble is idle.
func runController(t *testing.T, c cache.Controller) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); c.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !cache.WaitForCacheSync(ctx.Done(), c.HasSynced) {
		t.Fatal("not synced")
	}
	synctest.Wait()
}

// deltaLog records what Process is handed, one line per delta.
type deltaLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *deltaLog) process(obj any, initial bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range obj.(cache.Deltas) {
		o := d.Object
		if u, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = u.Obj
		}
		l.lines = append(l.lines, fmt.Sprintf("%s %s initial=%v", d.Type, nameRV(o), initial))
	}
	return nil
}

func (l *deltaLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// The Cilium pattern: New with a Config whose Queue is a DeltaFIFO and
// whose Process is the caller's. listwatch's New over its DeltaFIFO and
// client-go's over client-go's hand Process the same deltas on the same
// script, and hand a failed list to WatchErrorHandler with client-go's
// *Reflector.
func TestNewSameDeltasAsClientGo(t *testing.T) {
	impls := []struct {
		name string
		new  func(*cache.Config) cache.Controller
		fifo func(cache.DeltaFIFOOptions) cache.Queue
	}{
		{"listwatch", New, func(o cache.DeltaFIFOOptions) cache.Queue { return NewDeltaFIFOWithOptions(o) }},
		{"client-go", cache.New, func(o cache.DeltaFIFOOptions) cache.Queue { return cache.NewDeltaFIFOWithOptions(o) }},
	}
	transcripts := map[string][]string{}
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				var out []string
				log := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
				srv := fake.NewTestServer(t, fake.Options{})
				a, _ := srv.Create(ctx, objects.ConfigMap("ns", "a", objects.Data("v", "0")))
				known := cache.NewStore(cache.MetaNamespaceKeyFunc)
				deltas := &deltaLog{}
				var mu sync.Mutex
				var handled []string
				// The first streaming list and list fail.
				srv.FailNext(fake.Failure{Resource: cmGVR, Times: 2, Kind: fake.Forbidden})
				c := im.new(&cache.Config{
					Queue:            im.fifo(cache.DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true}),
					ListerWatcher:    srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}),
					ObjectType:       &corev1.ConfigMap{},
					FullResyncPeriod: 30 * time.Second,
					Process: func(obj any, initial bool) error {
						for _, d := range obj.(cache.Deltas) {
							switch d.Type {
							case cache.Deleted:
								known.Delete(d.Object)
							default:
								known.Add(d.Object)
							}
						}
						return deltas.process(obj, initial)
					},
					WatchErrorHandler: func(r *cache.Reflector, err error) {
						mu.Lock()
						defer mu.Unlock()
						handled = append(handled, fmt.Sprintf("%s forbidden=%v", r.TypeDescription(), apierrors.IsForbidden(err)))
					},
				})
				if c.HasSynced() || c.LastSyncResourceVersion() != "" {
					t.Fatal("synced before Run")
				}
				runController(t, c)
				mu.Lock()
				// client-go hands over one error per failed ListAndWatch,
				// listwatch each one it meets: compare what they were.
				log("handled %q", slices.Compact(handled))
				mu.Unlock()
				log("list %q rv=%s", deltas.take(), c.LastSyncResourceVersion())

				a2 := a.DeepCopyObject().(*corev1.ConfigMap)
				a2.Data["v"] = "1"
				srv.Update(ctx, a2)
				srv.Create(ctx, objects.ConfigMap("ns", "b", objects.Data("v", "0")))
				synctest.Wait()
				log("events %q", deltas.take())

				time.Sleep(31 * time.Second)
				synctest.Wait()
				got := deltas.take()
				slices.Sort(got)
				log("resync %q", got)
				if err := fake.Converged(srv, fake.LWOptions{Resource: cmGVR}, known.List()); err != nil {
					t.Fatal(err)
				}
				transcripts[im.name] = out
			})
		})
	}
	sameTranscripts(t, transcripts)
}

// The informer constructors built on New: listwatch's and client-go's call
// the handler the same way on the same script (a relist's notifications
// compared as a set: client-go's RealFIFO hands over deletions first,
// a DeltaFIFO last), and both stores end equal to the server's.
func TestInformersSameHandlerCallsAsClientGo(t *testing.T) {
	type ctor func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller)
	upper := func(obj any) (any, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return obj, nil
		}
		cm = cm.DeepCopy()
		cm.Data["t"] = "x"
		return cm, nil
	}
	idx := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	type pair struct{ listwatch, clientgo ctor }
	for name, p := range map[string]pair{
		"NewInformer": {
			func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller) {
				return NewInformer(lw, &corev1.ConfigMap{}, 30*time.Second, h)
			},
			func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller) {
				//lint:ignore SA1019 the deprecated constructor is what is compared
				return cache.NewInformer(lw, &corev1.ConfigMap{}, 30*time.Second, h)
			},
		},
		"NewIndexerInformer": {
			func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller) {
				return NewIndexerInformer(lw, &corev1.ConfigMap{}, 0, h, idx)
			},
			func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller) {
				//lint:ignore SA1019 the deprecated constructor is what is compared
				return cache.NewIndexerInformer(lw, &corev1.ConfigMap{}, 0, h, idx)
			},
		},
		"NewTransformingIndexerInformer": {
			func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller) {
				return NewTransformingIndexerInformer(lw, &corev1.ConfigMap{}, 0, h, idx, upper)
			},
			func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller) {
				//lint:ignore SA1019 the deprecated constructor is what is compared
				return cache.NewTransformingIndexerInformer(lw, &corev1.ConfigMap{}, 0, h, idx, upper)
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			transcripts := map[string][]string{}
			for impl, new := range map[string]ctor{"listwatch": p.listwatch, "client-go": p.clientgo} {
				t.Run(impl, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						transcripts[impl] = informerScript(t, new)
					})
				})
			}
			sameTranscripts(t, transcripts)
		})
	}
}

func informerScript(t *testing.T, new func(lw cache.ListerWatcher, h cache.ResourceEventHandler) (cache.Store, cache.Controller)) []string {
	ctx := t.Context()
	var out []string
	log := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	srv := fake.NewTestServer(t, fake.Options{})
	a, _ := srv.Create(ctx, objects.ConfigMap("ns", "a", objects.Data("v", "0")))
	srv.Create(ctx, objects.ConfigMap("ns", "b", objects.Data("v", "0")))
	h := &informertest.ClientGoRecorder{}
	st, c := new(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), h)
	runController(t, c)
	initial := h.Take()
	slices.Sort(initial)
	log("initial %q", initial)

	a2 := a.DeepCopyObject().(*corev1.ConfigMap)
	a2.Data["v"] = "1"
	a3, _ := srv.Update(ctx, a2)
	srv.Delete(ctx, a3)
	srv.Create(ctx, objects.ConfigMap("ns", "c", objects.Data("v", "0")))
	synctest.Wait()
	log("events %q rv=server's: %v", h.Take(), c.LastSyncResourceVersion() == srv.ResourceVersion())

	time.Sleep(31 * time.Second)
	synctest.Wait()
	got := h.Take()
	slices.Sort(got)
	log("resync %q", got)

	missDeletion(t, srv, "b")
	time.Sleep(25 * time.Second)
	synctest.Wait()
	got = h.Take()
	slices.Sort(got)
	log("relist %q", got)
	var transformed []string
	for _, o := range st.List() {
		if o.(*corev1.ConfigMap).Data["t"] == "x" {
			transformed = append(transformed, nameRV(o))
		}
	}
	log("transformed %q", transformed)
	if err := fake.Converged(srv, fake.LWOptions{Resource: cmGVR}, st.List()); err != nil {
		t.Fatal(err)
	}
	return out
}

// NewSharedInformer is the drop-in shared informer without indexers.
func TestNewSharedInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		inf := NewSharedInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0)
		if _, ok := inf.(*listwatchInformer); !ok {
			t.Fatalf("NewSharedInformer returned a %T", inf)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("not synced")
		}
		if err := fake.Converged(srv, fake.LWOptions{Resource: cmGVR}, inf.GetStore().List()); err != nil {
			t.Fatal(err)
		}
	})
}
