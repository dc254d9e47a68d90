package deltafifo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"
)

// cacheKnown is a client-go KeyListerGetter with sorted ListKeys, updated
// from popped cache.Deltas like an informer's indexer.
type cacheKnownStore struct {
	mu   sync.Mutex
	objs map[string]any
}

func newCacheKnown() *cacheKnownStore { return &cacheKnownStore{objs: map[string]any{}} }

func (k *cacheKnownStore) ListKeys() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]string, 0, len(k.objs))
	for key := range k.objs {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

func (k *cacheKnownStore) GetByKey(key string) (any, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	o, ok := k.objs[key]
	return o, ok, nil
}

// prefill puts the same few objects in k and other, as if an informer had
// already processed them.
func (k *cacheKnownStore) prefill(g *objGen, other *cacheKnownStore) {
	for range 3 {
		o := g.next()
		key, _ := cache.MetaNamespaceKeyFunc(o)
		k.objs[key], other.objs[key] = o, o.DeepCopy()
	}
}

func (k *cacheKnownStore) apply(ds []cache.Delta) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, d := range ds {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(d.Object)
		if err != nil {
			panic(err)
		}
		if d.Type == cache.Deleted {
			delete(k.objs, key)
		} else {
			k.objs[key] = d.Object
		}
	}
}

// objGen makes objects from a small name pool with ever-growing versions, so
// that any mix-up of versions shows in a deep comparison.
type objGen struct {
	rng *rand.Rand
	rv  int
}

var genNames = [][2]string{
	{"n1", "a"}, {"n1", "b"}, {"n1", "c"}, {"n2", "a"}, {"n2", "d"}, {"", "e"}, {"", "f"}, {"n2", "g"},
}

func (g *objGen) next() obj {
	g.rv++
	n := genNames[g.rng.IntN(len(genNames))]
	return mk(n[0], n[1], g.rv)
}

// list returns a random relist: each name with probability 1/2, sometimes
// one name twice.
func (g *objGen) list() []obj {
	var out []obj
	g.rv++
	for _, n := range genNames {
		if g.rng.IntN(2) == 0 {
			out = append(out, mk(n[0], n[1], g.rv))
		}
	}
	if len(out) > 0 && g.rng.IntN(8) == 0 {
		out = append(out, out[0].DeepCopy())
	}
	return out
}

// labelTransform marks a copy of the object, so transformed and untransformed
// objects differ in a deep comparison.
func labelTransform(o obj) obj {
	c := o.DeepCopy()
	c.Labels = map[string]string{"transformed": "yes"}
	return c
}

func cacheTransform(o any) (any, error) { return labelTransform(o.(obj)), nil }

func typedTransform(o obj) (obj, error) { return labelTransform(o), nil }

// anyList copies a typed list into the []any client-go wants, deep-copying
// so the two FIFOs under comparison never share an object.
func anyList(list []obj) []any {
	out := make([]any, len(list))
	for i, o := range list {
		out[i] = o.DeepCopy()
	}
	return out
}

// popped is one Pop's outcome, comparable across implementations.
type popped struct {
	Deltas  []cache.Delta
	Initial bool
	Err     error
}

// refPop pops from a client-go queue inside a synctest bubble. If the queue
// is empty the Pop would block, so it reports that instead (and the caller's
// cleanup closes the queue, which releases the goroutine).
func refPop(t *testing.T, pop func(record func([]cache.Delta, bool)) error) (popped, bool) {
	t.Helper()
	var p popped
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Err = pop(func(ds []cache.Delta, initial bool) {
			p.Deltas = append(p.Deltas, ds...)
			p.Initial = initial
		})
	}()
	synctest.Wait()
	select {
	case <-done:
		return p, true
	default:
		return p, false
	}
}

// toCache converts typed deltas the way the drop-in does, for comparison
// with client-go.
func toCache(key string, ds []Delta[obj]) []cache.Delta {
	out := make([]cache.Delta, len(ds))
	for i, d := range ds {
		var o any = d.Object
		if d.Object == nil {
			o = nil
		}
		if d.FinalStateUnknown {
			o = cache.DeletedFinalStateUnknown{Key: key, Obj: o}
		}
		out[i] = cache.Delta{Type: cacheDeltaTypes[d.Type], Object: o}
	}
	return out
}

func comparePops(t *testing.T, step string, got, want popped) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return fmt.Sprint(a) == fmt.Sprint(b) })); diff != "" {
		t.Fatalf("%s: pop differs from client-go (-client-go +ours):\n%s", step, diff)
	}
}
