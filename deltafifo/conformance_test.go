package deltafifo_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/deltafifo"
	"github.com/listwatch/listwatch/reflector/storetest"
	"github.com/listwatch/listwatch/store"
)

// A FIFO with a consumer that applies what it pops to a store (its known
// objects, as an informer has them) is a reflector.PagedStore, in both
// modes.
func TestFIFOConformsToReflectorStore(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		name := "coalescing"
		if inOrder {
			name = "in-order"
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Subject {
				st, err := store.New(store.Options[*corev1.ConfigMap]{})
				if err != nil {
					t.Fatal(err)
				}
				f := deltafifo.New(t.Context(), deltafifo.Options[*corev1.ConfigMap]{KnownObjects: st, InOrder: inOrder})
				apply := func(key string, deltas []deltafifo.Delta[*corev1.ConfigMap], _ bool) error {
					for _, d := range deltas {
						if d.Type == deltafifo.Deleted {
							st.DeleteByKey(key)
							continue
						}
						if _, _, err := st.SwapKeyed(key, d.Object); err != nil {
							return err
						}
					}
					return nil
				}
				return storetest.Subject{Store: f, Contents: func() map[string]string {
					for f.Len() > 0 {
						if err := f.Pop(t.Context(), apply); err != nil && !errors.Is(err, deltafifo.ErrClosed) {
							t.Fatal(err)
						}
					}
					out := map[string]string{}
					for _, o := range st.Reader().List() {
						out[o.Namespace+"/"+o.Name] = o.ResourceVersion
					}
					return out
				}}
			})
		})
	}
}
