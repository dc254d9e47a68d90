package informer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

// Handing a watch event to the queue allocates only its key ("ns/name")
// when the key is queued already (the common case in a burst): a
// regression here costs every event (a method value kept for the
// atomic-relist path once cost one more allocation per event).
func TestSinkWriteDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	inf, err := New(Options[*corev1.ConfigMap]{Source: cache.ToListerWatcherWithContext(chanLW{})})
	if err != nil {
		t.Fatal(err)
	}
	cm := objects.ConfigMap("ns", "a", objects.Data("v", "0"))
	cm.ResourceVersion = "7"
	mustNil(t, inf.sink.Add(cm))
	for name, write := range map[string]func(*corev1.ConfigMap) error{"add": inf.sink.Add, "update": inf.sink.Update, "delete": inf.sink.Delete} {
		if n := testing.AllocsPerRun(100, func() { _ = write(cm) }); n != 1 {
			t.Errorf("%s: %v allocations per event, want 1 (the key)", name, n)
		}
	}
}
