package store_test

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/store"
)

// TestOtherObjectKinds checks that the store works for the object kinds
// informers commonly cache besides typed ones.
func TestOtherObjectKinds(t *testing.T) {
	t.Run("unstructured", func(t *testing.T) {
		s, err := store.New(store.Options[*unstructured.Unstructured]{})
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		u.SetNamespace("ns")
		u.SetName("u")
		u.SetResourceVersion("3")
		if err := s.Upsert(u); err != nil {
			t.Fatal(err)
		}
		got, ok := s.Reader().Namespace("ns").Get("u")
		if !ok || got != u || s.Reader().LastSyncResourceVersion() != "3" {
			t.Fatalf("Get = %v %t", got, ok)
		}
	})
	t.Run("partial object metadata", func(t *testing.T) {
		s, err := store.New(store.Options[*metav1.PartialObjectMetadata]{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"b", "a"} {
			m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}}
			if err := s.Upsert(m); err != nil {
				t.Fatal(err)
			}
		}
		if keys, _ := s.Reader().IndexKeys(store.NamespaceIndex, "ns"); !slices.Equal(keys, []string{"ns/a", "ns/b"}) {
			t.Fatalf("IndexKeys = %v", keys)
		}
	})
}
