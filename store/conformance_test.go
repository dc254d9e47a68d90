package store_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/reflector/storetest"
	"github.com/listwatch/listwatch/store"
)

// A Store is a reflector.Store (not a PagedStore: Replace is atomic).
func TestStoreConformsToReflectorStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		s, err := store.New(store.Options[*corev1.ConfigMap]{})
		if err != nil {
			t.Fatal(err)
		}
		return storetest.Subject{Store: s, Contents: func() map[string]string {
			out := map[string]string{}
			for _, o := range s.Reader().List() {
				out[o.Namespace+"/"+o.Name] = o.ResourceVersion
			}
			return out
		}}
	})
}
