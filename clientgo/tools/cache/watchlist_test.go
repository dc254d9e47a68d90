package cache

import (
	"fmt"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// The shared informer streams its first list only while client-go's
// WatchListClient feature is on, as client-go's does: tests turn it off
// to have fake clients that cannot stream listed (kube-controller-manager's
// devicetainteviction tests, whose informers never synced otherwise).
func TestInformerHonoursWatchListClient(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("WatchListClient=", on), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, features.WatchListClient, on)
			synctest.Test(t, func(t *testing.T) {
				srv := fake.NewTestServer(t, fake.Options{})
				srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
				inf := NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
				go inf.RunWithContext(t.Context())
				if !cache.WaitForCacheSync(t.Context().Done(), inf.HasSynced) {
					t.Fatal("not synced")
				}
				calls := srv.Calls()
				if len(calls) == 0 || (calls[0].Verb == fake.VerbList) == on {
					t.Fatalf("first call %v with WatchListClient=%v", calls, on)
				}
			})
		})
	}
}
