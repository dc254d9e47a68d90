package informer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/reflector/storetest"
)

// The informer's sink, with the pop loop applying what it queues, is a
// reflector.PagedStore, in both queue modes.
func TestSinkConformsToReflectorStore(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		name := "coalescing"
		if inOrder {
			name = "in-order"
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Subject {
				srv := fake.NewTestServer(t, fake.Options{})
				inf, err := New(Options[*corev1.ConfigMap]{Source: srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), OrderedQueue: inOrder})
				if err != nil {
					t.Fatal(err)
				}
				return storetest.Subject{Store: inf.sink, Contents: func() map[string]string {
					for inf.fifo.Len() > 0 {
						if err := inf.fifo.PopBatch(t.Context(), inf.processBatch); err != nil {
							t.Fatal(err)
						}
					}
					out := map[string]string{}
					for _, o := range inf.Reader().List() {
						out[o.Namespace+"/"+o.Name] = o.ResourceVersion
					}
					return out
				}}
			})
		})
	}
}
