package store_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/store"
)

// namesIn returns the names of the objects the namespace index files
// under ns, sorted.
func namesIn(t *testing.T, s *store.Store[*corev1.Pod], ns string) []string {
	t.Helper()
	objs, err := s.Reader().ByIndex(store.NamespaceIndex, ns)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	return names
}

// The built-in namespace index files each object under its namespace
// whether the store works it out from NamespacedKey's keys (the default)
// or, with a key function of the caller's, from the object; cluster-scoped
// objects (no namespace) under "". Adds, updates and deletions keep it so.
func TestNamespaceIndexWithEitherKeyFunction(t *testing.T) {
	byName := func(p *corev1.Pod) (string, error) { return "k-" + p.Namespace + "-" + p.Name, nil }
	for _, tc := range []struct {
		name    string
		keyFunc store.KeyFunc[*corev1.Pod]
	}{{"NamespacedKey", nil}, {"own key function", byName}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := store.New(store.Options[*corev1.Pod]{KeyFunc: tc.keyFunc})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []*corev1.Pod{pod("a", "p1", "", nil), pod("a", "p2", "", nil), pod("b", "p3", "", nil),
				pod("", "c1", "", nil)} {
				if err := s.Upsert(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Upsert(pod("a", "p1", "n2", nil)); err != nil { // an update
				t.Fatal(err)
			}
			if err := s.Delete(pod("a", "p2", "", nil)); err != nil {
				t.Fatal(err)
			}
			for ns, want := range map[string][]string{"a": {"p1"}, "b": {"p3"}, "": {"c1"}, "c": nil} {
				if got := namesIn(t, s, ns); !slices.Equal(got, want) {
					t.Errorf("namespace %q: %v, want %v", ns, got, want)
				}
			}
			if got, _ := s.Reader().ListIndexValues(store.NamespaceIndex); !sameSet(got, []string{"", "a", "b"}) {
				t.Errorf("namespace values %v, want \"\", a, b", got)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
