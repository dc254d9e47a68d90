package informer

import (
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// owningSource is a choosySource that says what it serves, as
// shard.Source does.
type owningSource struct{ *choosySource }

func (o owningSource) Owns(obj metav1.Object) bool { return o.wants(obj.GetName()) }

// A relist under a new part tells an object the source stopped serving as
// moved away, and one deleted on the server while the watch was down, still
// in the part, as a deletion; a watched deletion stays a deletion.
func TestMovedAwayIsToldApartFromADeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for _, n := range []string{"a", "b", "c", "d"} {
			if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", n, objects.Data("v", "0"))); err != nil {
				t.Fatal(err)
			}
		}
		src := owningSource{&choosySource{ListerWatcherWithContext: srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})}}
		src.set("a", "b", "c", "d")
		inf, err := New(Options[*corev1.ConfigMap]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		h := &cmEvents{}
		runSynced(t, inf, h)
		h.Take()
		deleteCM(t, srv, "d")
		synctest.Wait()
		// c is deleted unseen (the source stops serving its events), a
		// and b move away.
		src.set()
		deleteCM(t, srv, "c")
		synctest.Wait()
		src.set("c")
		inf.Relist()
		synctest.Wait()
		// The relist's deletions come in the store's order.
		calls := h.Take()
		if len(calls) != 4 || calls[0] != "delete d@5 unknown=false" {
			t.Fatalf("calls %q, want delete d first, then the relist's three", calls)
		}
		if got, want := sorted(calls[1:]), []string{"delete c@3 unknown=true", "moved a@1", "moved b@2"}; !slices.Equal(got, want) {
			t.Fatalf("relist told %q, want %q", got, want)
		}
	})
}

func deleteCM(t *testing.T, srv *fake.Server, name string) {
	t.Helper()
	o, err := srv.Get(t.Context(), cmGVR, "ns", name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Delete(t.Context(), o); err != nil {
		t.Fatal(err)
	}
}

// leavingSource is a choosySource that says which objects left its
// scope, as scope.Source does.
type leavingSource struct{ *choosySource }

func (l leavingSource) Left(obj metav1.Object) bool { return !l.wants(obj.GetName()) }

// A relist under a narrower scope tells an object that left it as a
// deletion whose final state is known, and one deleted on the server while
// the watch was down, still in scope, with finalStateUnknown.
func TestLeftScopeIsAKnownDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		for _, n := range []string{"a", "b", "c"} {
			if _, err := srv.Create(t.Context(), objects.ConfigMap("ns", n, objects.Data("v", "0"))); err != nil {
				t.Fatal(err)
			}
		}
		src := leavingSource{&choosySource{ListerWatcherWithContext: srv.ListerWatcher(fake.LWOptions{Resource: cmGVR})}}
		src.set("a", "b", "c")
		inf, err := New(Options[*corev1.ConfigMap]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		h := &cmEvents{}
		runSynced(t, inf, h)
		h.Take()
		// c is deleted unseen (the source stops serving its events), a
		// leaves the scope.
		src.set("b")
		deleteCM(t, srv, "c")
		synctest.Wait()
		src.set("b", "c")
		inf.Relist()
		synctest.Wait()
		if got, want := sorted(h.Take()), []string{"delete a@1 unknown=false", "delete c@3 unknown=true"}; !slices.Equal(got, want) {
			t.Fatalf("relist told %q, want %q", got, want)
		}
	})
}
