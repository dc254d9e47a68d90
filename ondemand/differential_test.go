package ondemand_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/ondemand"
	"github.com/listwatch/listwatch/reflector"
)

// TestDifferentialAgainstAPlainCache runs random writes and reads and
// checks every read of the Cache against what the server wrote and what
// a plain informer of whole objects holds: a read is a version the server
// wrote, never older than the metadata cached when the read began, and,
// once both caches have caught up with the server, equal to the plain
// cache's object.
func TestDifferentialAgainstAPlainCache(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { differential(t, seed) })
		})
	}
}

func differential(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 48))
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
	budgets := []int64{0, 4 << 10, ondemand.Unlimited}
	e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: budgets[seed%3]})
	plain, err := informer.New(informer.Options[*corev1.Secret]{Name: "plain",
		Source: reflector.FromClient[*corev1.SecretList](e.cs.CoreV1().Secrets(""))})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = plain.Run(t.Context()) }()
	if err := plain.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}

	written := map[string]string{} // key@rv -> data
	live := map[string]*corev1.Secret{}
	const keys = 12
	for step := range 400 {
		n := name(rng.IntN(keys))
		key := "ns/" + n
		switch op := rng.IntN(10); {
		case op < 3: // write
			cur := live[n]
			data := strconv.Itoa(step) + string(make([]byte, rng.IntN(2000)))
			var got *corev1.Secret
			switch {
			case cur == nil:
				got = create(t, srv, secret("ns", n, data, nil))
			case rng.IntN(4) == 0:
				if _, err := srv.Delete(t.Context(), cur); err != nil {
					t.Fatal(err)
				}
				delete(live, n)
				continue
			default:
				next := cur.DeepCopy()
				next.Data["key"] = []byte(data)
				got = update(t, srv, next)
			}
			live[n] = got
			written[key+"@"+got.ResourceVersion] = data
		case op < 4: // let everything catch up, then compare with the plain cache
			e.caughtUp(t)
			if err := plain.WaitForResourceVersion(t.Context(), srv.ResourceVersion()); err != nil {
				t.Fatal(err)
			}
			want, exists := plain.Reader().GetByKey(key)
			got, err := e.cache.Get(t.Context(), "ns", n)
			switch {
			case !exists && !apierrors.IsNotFound(err):
				t.Fatalf("step %d: %s: the plain cache has none, Get = %v, %v", step, key, got, err)
			case exists && err != nil:
				t.Fatalf("step %d: %s: Get: %v", step, key, err)
			case exists && (got.ResourceVersion != want.ResourceVersion || dataOf(got) != dataOf(want)):
				t.Fatalf("step %d: %s: Get = rv %s, the plain cache has rv %s", step, key, got.ResourceVersion, want.ResourceVersion)
			}
		default: // read while the caches may lag
			meta, known := e.meta.Reader().GetByKey(key)
			got, err := e.cache.Get(t.Context(), "ns", n)
			if err != nil {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("step %d: %s: Get: %v", step, key, err)
				}
				continue
			}
			data, ok := written[key+"@"+got.ResourceVersion]
			if !ok || data != dataOf(got) {
				t.Fatalf("step %d: %s: Get = rv %s, a version the server never wrote with that data", step, key, got.ResourceVersion)
			}
			if known && rvLess(got.ResourceVersion, meta.ResourceVersion) {
				t.Fatalf("step %d: %s: Get = rv %s, older than the cached metadata's %s", step, key, got.ResourceVersion, meta.ResourceVersion)
			}
		}
		if st := e.cache.Stats(); st.Budget >= 0 && st.HeldBytes > st.Budget {
			t.Fatalf("step %d: %d bytes held over a budget of %d", step, st.HeldBytes, st.Budget)
		}
	}
	st := e.cache.Stats()
	t.Logf("budget %d: %+v", st.Budget, st)
	if st.Reads == 0 || st.Fetches == 0 {
		t.Fatalf("the run read nothing: %+v", st)
	}
}

func rvLess(a, b string) bool {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	return x < y
}
