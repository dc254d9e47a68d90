package store_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/store"
)

// TestNamelessKeys: with Options.NamelessKeys a store keys objects without
// a name as client-go's MetaNamespaceKeyFunc does, its namespace index and
// Namespace("").Get included; without it, it refuses them.
func TestNamelessKeys(t *testing.T) {
	nameless := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "web-"}}
	cluster := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "c-"}}

	strict, err := store.New(store.Options[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	if err := strict.Upsert(nameless); !errors.Is(err, store.ErrNoName) {
		t.Fatalf("default keys: %v, want ErrNoName", err)
	}
	if _, _, err := strict.SwapKeyed("", cluster); !errors.Is(err, store.ErrNoName) {
		t.Fatalf("default keys, key \"\": %v, want ErrNoName", err)
	}

	s, err := store.New(store.Options[*corev1.Pod]{NamelessKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{nameless, cluster} {
		if err := s.Upsert(p); err != nil {
			t.Fatal(err)
		}
	}
	keys := s.ListKeys()
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"", "default/"}) {
		t.Fatalf("keys %q", keys)
	}
	r := s.Reader()
	if got, ok := r.Namespace("default").Get(""); !ok || got != nameless {
		t.Fatalf("Namespace(default).Get(\"\"): %v %v", got, ok)
	}
	if got, ok := r.Namespace("").Get(""); !ok || got != cluster {
		t.Fatalf("Namespace(\"\").Get(\"\"): %v %v", got, ok)
	}
	if n := len(r.Namespace("default").List(nil)); n != 1 {
		t.Fatalf("namespace default lists %d", n)
	}
	var txErr error
	s.Write(func(tx *store.Tx[*corev1.Pod]) { _, _, txErr = tx.Swap("", cluster) })
	if txErr != nil {
		t.Fatalf("Tx.Swap with the key \"\": %v", txErr)
	}
	if err := s.Delete(nameless); err != nil || s.Reader().Len() != 1 {
		t.Fatalf("Delete: %v, %d left", err, s.Reader().Len())
	}
	if k, err := store.MetaNamespaceKey[*corev1.Pod](nil); !errors.Is(err, store.ErrNilObject) {
		t.Fatalf("MetaNamespaceKey(nil) = %q, %v", k, err)
	}
}
