package scope_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/scope"
)

// churnPrefix names the objects the property tests' writers create and
// write; the others (the seeded cm-*) are left alone while they run.
const churnPrefix = "churn-"

// selectors are the label selectors the random scopes choose among.
var selectors = []string{"", "tier=even", "tier=odd", "tier!=odd", "tier in (even,odd)"}

// randomScopes is the property test of issue 49's Proof on the real
// apiserver: while a writer creates, relabels and deletes objects, an
// informer of the unprivileged user goes through random scopes (random
// namespaces of n0-n5, random label selectors; some with the namespace
// secret or every namespace, which the user may not list). After each
// change:
//   - a scope the server refuses makes Update return the 403, the status
//     keep the old scope with the error, and no handler call for an object
//     the writer leaves alone;
//   - a scope applied tells the handler, of the objects the writer leaves
//     alone, exactly the difference: an add for each gained, a delete
//     whose final state is known for each lost, nothing for the others.
//
// At the end the cache equals a fresh informer's of the final scope, and
// every call the handler was told, replayed in order from the first,
// changes something and ends at that cache. The seed is logged.
func randomScopes(t *testing.T, admin, user kubernetes.Interface, of func(kubernetes.Interface) func(string) cache.ListerWatcherWithContext) {
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	nss := namespaces(0, 6)

	// The objects the writer leaves alone, and their labels.
	static := map[string]map[string]string{}
	for _, ns := range append(slices.Clone(nss), "secret") {
		list, err := admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range list.Items {
			static[ns+"/"+cm.Name] = cm.Labels
		}
	}
	in := func(sc scope.Scope, k string, lbls map[string]string) bool {
		ns, _, _ := strings.Cut(k, "/")
		sel, err := labels.Parse(sc.LabelSelector)
		if err != nil {
			t.Fatal(err)
		}
		return sc.Has(ns) && sel.Matches(labels.Set(lbls))
	}

	held := scope.Scope{Namespaces: []string{"n0", "n1"}}
	h := startWith(t, of(user), held)
	defer h.stop()
	var all []string // every call, in order
	// barrier writes an object in held's first namespace that held
	// selects and returns once the handler was told of it: every call
	// caused before is then recorded (one handler's calls are in order).
	barriers := 0
	barrier := func(held scope.Scope) string {
		t.Helper()
		barriers++
		tier := "even"
		if held.LabelSelector == "tier=odd" {
			tier = "odd"
		}
		name := fmt.Sprintf("%sbarrier-%02d", churnPrefix, barriers)
		made, err := admin.CoreV1().ConfigMaps(held.Namespaces[0]).Create(ctx,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": tier}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := "add " + held.Namespaces[0] + "/" + name
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		h.rec.await(t, wctx, func(calls []string) bool { return slices.Contains(calls, want) })
		return made.ResourceVersion
	}
	barrier(held)
	all = append(all, h.rec.takeInOrder()...)

	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	writes := 0
	wg.Go(func() { writes = churnObjects(cctx, admin, nss, rand.New(rand.NewPCG(seed, 2))) })
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	defer stop()

	applied, refused := 0, 0
	for step := range 12 {
		var sc scope.Scope
		if rng.IntN(8) > 0 { // else every namespace
			for _, ns := range nss {
				if rng.IntN(3) == 0 {
					sc.Namespaces = append(sc.Namespaces, ns)
				}
			}
			if rng.IntN(6) == 0 {
				sc.Namespaces = append(sc.Namespaces, "secret")
			}
			if len(sc.Namespaces) == 0 {
				sc.Namespaces = []string{nss[rng.IntN(len(nss))]}
			}
		}
		sc.LabelSelector = selectors[rng.IntN(len(selectors))]
		forbidden := sc.All() || sc.Has("secret")
		err := h.src.Update(ctx, sc)
		next := sc
		switch {
		case forbidden && !apierrors.IsForbidden(err):
			t.Fatalf("step %d: Update(%v) = %v, want 403", step, sc, err)
		case forbidden:
			next = held
			refused++
			if st := h.src.Status(); !st.Scope.Equal(held) || st.Pending || !apierrors.IsForbidden(st.LastError) {
				t.Fatalf("step %d: refused %v: status %+v, want the old scope %v and the 403", step, sc, st, held)
			}
		case err != nil:
			t.Fatalf("step %d: Update(%v): %v", step, sc, err)
		default:
			applied++
			if st := h.src.Status(); !st.Scope.Equal(sc) || st.Pending {
				t.Fatalf("step %d: applied %v: status %+v", step, sc, st)
			}
		}
		var want []string
		for k, lbls := range static {
			switch was, is := in(held, k, lbls), in(next, k, lbls); {
			case is && !was:
				want = append(want, "add "+k)
			case was && !is:
				want = append(want, "delete "+k)
			}
		}
		slices.Sort(want)
		barrier(next)
		calls := h.rec.takeInOrder()
		all = append(all, calls...)
		var got []string
		for _, c := range calls {
			if _, k, _ := strings.Cut(c, " "); !isChurn(k) {
				got = append(got, c)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: %v → %v (refused %v): calls for the objects left alone\\n%v\\nwant\\n%v", step, held, sc, forbidden, got, want)
		}
		held = next
	}
	stop()
	rv := barrier(held) // after every write of the writer
	realSettle(t, h, rv)
	want := realFresh(t, of(admin), held, rv)
	if got := cached(h.inf); !maps.Equal(got, want) {
		t.Fatalf("cache %v, want a fresh informer's of %v: %v", sortedKeys(got), held, sortedKeys(want))
	}
	all = append(all, h.rec.takeInOrder()...)
	got, err := replayed(all)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, sortedKeys(want)) {
		t.Fatalf("the handler's calls replay to %v, want %v", got, sortedKeys(want))
	}
	t.Logf("%d scopes applied, %d refused; %d writes meanwhile; %d handler calls", applied, refused, writes, len(all))
}

// isChurn reports whether key k names an object of the property tests'
// writers.
func isChurn(k string) bool {
	_, name, _ := strings.Cut(k, "/")
	return strings.HasPrefix(name, churnPrefix)
}

// churnObjects creates, relabels and deletes ConfigMaps churn-00 …
// churn-07 in nss until ctx ends, and returns how many writes it made.
// Each write runs to its end (a write cancelled mid-way could land after
// the caller's next barrier): when churnObjects returns, every write it
// made is acknowledged or failed.
func churnObjects(ctx context.Context, cs kubernetes.Interface, nss []string, rng *rand.Rand) int {
	wctx := context.WithoutCancel(ctx)
	n := 0
	for ctx.Err() == nil {
		cms := cs.CoreV1().ConfigMaps(nss[rng.IntN(len(nss))])
		name := fmt.Sprintf("%s%02d", churnPrefix, rng.IntN(8))
		tier := []string{"even", "odd"}[rng.IntN(2)]
		cm, err := cms.Get(wctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = cms.Create(wctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": tier}}}, metav1.CreateOptions{})
		case err != nil:
		case rng.IntN(4) == 0:
			err = cms.Delete(wctx, name, metav1.DeleteOptions{})
		default:
			cm.Labels = map[string]string{"tier": tier}
			_, err = cms.Update(wctx, cm, metav1.UpdateOptions{})
		}
		if err == nil {
			n++
		}
	}
	return n
}

// freshUnderChurn is the property test of the Fresh goal on the real
// apiserver: while a writer updates objects as fast as the server takes
// them, Fresh, called again and again on an informer of every namespace
// and on one of a scope.Source of two, never returns nil while a write
// acknowledged before the call is missing from the cache (an object
// absent, or cached at a resource version older than the write's).
func freshUnderChurn(t *testing.T, admin kubernetes.Interface, of func(kubernetes.Interface) func(string) cache.ListerWatcherWithContext) {
	ctx := t.Context()
	nss := []string{"n0", "n1"}
	var mu sync.Mutex
	acked := map[string]uint64{} // key → resource version of its last acknowledged write
	ack := func(cm *corev1.ConfigMap) {
		rv, err := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		acked[key(cm)] = max(acked[key(cm)], rv)
	}
	var objs []*corev1.ConfigMap
	for _, ns := range nss {
		for i := range 5 {
			cm, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fresh-%02d", i)}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Namespace = ns
			ack(cm)
			objs = append(objs, cm)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		for i := 0; cctx.Err() == nil; i++ {
			cm := objs[i%len(objs)]
			cm.Data = map[string]string{"n": strconv.Itoa(i)}
			made, err := admin.CoreV1().ConfigMaps(cm.Namespace).Update(cctx, cm, metav1.UpdateOptions{})
			if err != nil {
				if cur, gerr := admin.CoreV1().ConfigMaps(cm.Namespace).Get(cctx, cm.Name, metav1.GetOptions{}); gerr == nil {
					objs[i%len(objs)] = cur // a conflict: write over the current state next round
				}
				continue
			}
			made.Namespace = cm.Namespace
			ack(made)
			objs[i%len(objs)] = made
		}
	})

	plain, err := informer.New(informer.Options[*corev1.ConfigMap]{Source: reflector.FromClient(admin.CoreV1().ConfigMaps(""))})
	if err != nil {
		t.Fatal(err)
	}
	_, scoped := attached(t, of(admin), scope.Scope{Namespaces: nss})
	for _, c := range []struct {
		name string
		inf  *informer.Informer[*corev1.ConfigMap]
	}{{"every namespace", plain}, {"scope.Source of n0,n1", scoped}} {
		t.Run(c.name, func(t *testing.T) {
			rctx, rcancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- c.inf.Run(rctx) }()
			defer func() {
				rcancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()
			if err := c.inf.WaitForSync(ctx); err != nil {
				t.Fatal(err)
			}
			const calls = 40
			var slowest time.Duration
			for range calls {
				mu.Lock()
				before := maps.Clone(acked)
				mu.Unlock()
				fctx, fcancel := context.WithTimeout(ctx, 10*time.Second)
				start := time.Now()
				err := c.inf.Fresh(fctx)
				fcancel()
				slowest = max(slowest, time.Since(start))
				if err != nil {
					t.Fatalf("Fresh under churn: %v", err)
				}
				now := cached(c.inf)
				for k, rv := range before {
					got, ok := now[k]
					n, _ := strconv.ParseUint(got, 10, 64)
					if !ok || n < rv {
						t.Fatalf("Fresh returned nil, but %s, written at resource version %d before the call, is cached at %q", k, rv, got)
					}
				}
			}
			t.Logf("%d calls of Fresh, each fresh; the slowest took %v", calls, slowest)
		})
	}
}
