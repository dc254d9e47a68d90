package retrywatcher

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/fake"
)

// writeLog makes random writes to srv and records the event each should
// produce, as describeEvent renders it.
type writeLog struct {
	srv    *fake.Server
	rnd    *rand.Rand
	live   map[string]*corev1.ConfigMap
	events []string
}

func (w *writeLog) step(ctx context.Context, t *testing.T) {
	name := fmt.Sprint("c", w.rnd.IntN(8))
	cur, ok := w.live[name]
	var (
		obj runtime.Object
		err error
		typ watch.EventType
	)
	switch {
	case !ok:
		obj, err = w.srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
		typ = watch.Added
	case w.rnd.IntN(3) == 0:
		obj, err = w.srv.Delete(ctx, cur)
		typ = watch.Deleted
	default:
		next := cur.DeepCopy()
		next.Data = map[string]string{"v": fmt.Sprint(w.rnd.Int())}
		obj, err = w.srv.Update(ctx, next)
		typ = watch.Modified
	}
	if err != nil {
		t.Fatal(err)
	}
	c := obj.(*corev1.ConfigMap)
	if typ == watch.Deleted {
		delete(w.live, name)
	} else {
		w.live[name] = c
	}
	w.events = append(w.events, describeEvent(watch.Event{Type: typ, Object: c}))
}

// Against fake/: streams cut every few events, 429 bursts, 500s and
// connection refusals lose and repeat nothing — for listwatch's
// RetryWatcher and, on the same schedules, client-go's.
func TestFakeServerFaultSchedules(t *testing.T) {
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = saved })
	for seed := range uint64(40) {
		for _, im := range impls {
			synctest.Test(t, func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(seed, 3))
				srv := fake.NewTestServer(t, fake.Options{})
				lw := srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR})
				log := &writeLog{srv: srv, rnd: rnd, live: map[string]*corev1.ConfigMap{}}
				start := srv.ResourceVersion()
				if start == "0" {
					log.step(t.Context(), t) // a watch from "0" is refused; start after one write
					log.events = nil
					start = srv.ResourceVersion()
				}
				rw, done, err := im.new(t.Context(), start, lw)
				if err != nil {
					t.Fatal(err)
				}
				for range 60 {
					log.step(t.Context(), t)
					switch rnd.IntN(6) {
					case 0:
						srv.InjectWatchFault(fake.WatchFault{Times: 1 + rnd.IntN(3), CloseAfterEvents: 1 + rnd.IntN(4)})
						srv.CloseWatches(fake.ConfigMaps().GVR)
					case 1:
						srv.FailNext(fake.Failure{Kind: fake.TooManyRequests, Times: 1 + rnd.IntN(4), Verbs: fake.VerbWatch})
						srv.CloseWatches(fake.ConfigMaps().GVR)
					case 2:
						srv.FailNext(fake.Failure{Kind: fake.InternalError, Times: 1 + rnd.IntN(2), Verbs: fake.VerbWatch})
						srv.CloseWatches(fake.ConfigMaps().GVR)
					case 3:
						srv.Down()
						time.Sleep(time.Duration(rnd.IntN(3000)) * time.Millisecond)
						srv.Up()
					}
					time.Sleep(time.Duration(rnd.IntN(200)) * time.Millisecond)
				}
				got := collectFor(rw.ResultChan(), len(log.events), time.Hour)
				if !slices.Equal(got, log.events) {
					if rw, ok := rw.(*RetryWatcher); ok {
						t.Logf("stats %+v err %v", rw.Stats(), rw.Err())
					}
					calls := srv.Calls()
					t.Logf("calls (%d): %v", len(calls), calls[max(0, len(calls)-8):])
					t.Fatalf("seed %d: events differ\ngot  %d %v\nwant %d %v", seed, len(got), got, len(log.events), log.events)
				}
				rw.Stop()
				<-done
			})
		}
	}
}

// collectFor reads n events, giving up after d.
func collectFor(ch <-chan watch.Event, n int, d time.Duration) []string {
	var out []string
	timeout := time.After(d)
	for len(out) < n {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			if _, err := meta.Accessor(ev.Object); err == nil || ev.Type == watch.Error {
				out = append(out, describeEvent(ev))
			}
		case <-timeout:
			return out
		}
	}
	return out
}

// Against fake/, relist mode bridges compactions: a consumer that applies
// the events (synthetic ones included) ends with exactly the server's
// objects. Without relist mode the same schedule ends in a 410 ERROR.
func TestFakeServerRelistModeConverges(t *testing.T) {
	for seed := range uint64(30) {
		synctest.Test(t, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 9))
			srv := fake.NewTestServer(t, fake.Options{})
			gvr := fake.ConfigMaps().GVR
			lw := srv.ListerWatcher(fake.LWOptions{Resource: gvr})
			log := &writeLog{srv: srv, rnd: rnd, live: map[string]*corev1.ConfigMap{}}
			rw, err := New(t.Context(), Options{Watcher: lw, Lister: lw})
			if err != nil {
				t.Fatal(err)
			}
			view := map[string]runtime.Object{}
			apply := func(ev watch.Event) {
				acc, err := meta.Accessor(ev.Object)
				if err != nil {
					t.Fatalf("seed %d: unexpected %s", seed, describeEvent(ev))
				}
				key := acc.GetNamespace() + "/" + acc.GetName()
				if ev.Type == watch.Deleted {
					delete(view, key)
				} else {
					view[key] = ev.Object
				}
			}
			for range 40 {
				log.step(t.Context(), t)
				if rnd.IntN(5) == 0 {
					srv.Down()
					log.step(t.Context(), t)
					log.step(t.Context(), t)
					srv.Compact(srv.ResourceVersion())
					srv.Up()
				}
			drain:
				for {
					select {
					case ev := <-rw.ResultChan():
						apply(ev)
					case <-time.After(time.Minute):
						break drain
					}
				}
			}
			objs := make([]runtime.Object, 0, len(view))
			for _, o := range view {
				objs = append(objs, o)
			}
			if err := fake.Converged(srv, fake.LWOptions{Resource: gvr}, objs); err != nil {
				t.Fatalf("seed %d: %v (stats %+v)", seed, err, rw.Stats())
			}
			rw.Stop()
			<-rw.Done()
		})
	}
}
