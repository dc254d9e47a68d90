package gvrfactory_test

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	upstreamdynamic "k8s.io/client-go/dynamic/dynamicinformer"
	upstream "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	upstreammetadata "k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/clientgo/dynamic/dynamicinformer"
	"github.com/listwatch/listwatch/clientgo/informers"
	"github.com/listwatch/listwatch/clientgo/internal/gvrfactory"
	"github.com/listwatch/listwatch/clientgo/metadata/metadatainformer"
)

// TestNilClient builds informers from factories given a nil client, as
// kube-controller-manager's tests do (informers.NewSharedInformerFactory(nil,
// 0) for informers they never start): client-go builds them without
// touching the client, and so must every door. Started, each lists and
// fails with ErrNoClient (client-go would dereference nil there).
func TestNilClient(t *testing.T) {
	pvs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	var nilClientset *kubernetes.Clientset
	var nilMetadata *metadata.Client
	var nilDynamic *dynamic.DynamicClient
	for _, tc := range []struct {
		name     string
		informer func() cache.SharedIndexInformer
		// upstream is client-go's informer built the same way: it must not
		// panic either, or the door need not tolerate it.
		upstream func() cache.SharedIndexInformer
	}{
		{"informers/nil", func() cache.SharedIndexInformer {
			return informers.NewSharedInformerFactory(nil, 0).Core().V1().PersistentVolumes().Informer()
		}, func() cache.SharedIndexInformer {
			return upstream.NewSharedInformerFactory(nil, 0).Core().V1().PersistentVolumes().Informer()
		}},
		{"informers/nil-pointer", func() cache.SharedIndexInformer {
			return informers.NewSharedInformerFactory(nilClientset, 0).Core().V1().Pods().Informer()
		}, func() cache.SharedIndexInformer {
			return upstream.NewSharedInformerFactory(nilClientset, 0).Core().V1().Pods().Informer()
		}},
		{"informers/ForResource", func() cache.SharedIndexInformer {
			g, err := informers.NewSharedInformerFactory(nil, 0).ForResource(pvs)
			if err != nil {
				t.Fatal(err)
			}
			return g.Informer()
		}, func() cache.SharedIndexInformer {
			g, err := upstream.NewSharedInformerFactory(nil, 0).ForResource(pvs)
			if err != nil {
				t.Fatal(err)
			}
			return g.Informer()
		}},
		{"metadatainformer/nil", func() cache.SharedIndexInformer {
			return metadatainformer.NewSharedInformerFactory(nil, 0).ForResource(pvs).Informer()
		}, func() cache.SharedIndexInformer {
			return upstreammetadata.NewSharedInformerFactory(nil, 0).ForResource(pvs).Informer()
		}},
		{"metadatainformer/nil-pointer", func() cache.SharedIndexInformer {
			return metadatainformer.NewFilteredMetadataInformer(nilMetadata, pvs, "", 0, nil, nil).Informer()
		}, func() cache.SharedIndexInformer {
			return upstreammetadata.NewFilteredMetadataInformer(nilMetadata, pvs, "", 0, nil, nil).Informer()
		}},
		{"dynamicinformer/nil", func() cache.SharedIndexInformer {
			return dynamicinformer.NewDynamicSharedInformerFactory(nil, 0).ForResource(pvs).Informer()
		}, func() cache.SharedIndexInformer {
			return upstreamdynamic.NewDynamicSharedInformerFactory(nil, 0).ForResource(pvs).Informer()
		}},
		{"dynamicinformer/nil-pointer", func() cache.SharedIndexInformer {
			return dynamicinformer.NewFilteredDynamicInformer(nilDynamic, pvs, "", 0, nil, nil).Informer()
		}, func() cache.SharedIndexInformer {
			return upstreamdynamic.NewFilteredDynamicInformer(nilDynamic, pvs, "", 0, nil, nil).Informer()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.upstream() // the precondition: client-go builds it
			inf := tc.informer()
			errs := make(chan error, 1)
			if err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
				select {
				case errs <- err:
				default:
				}
			}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				inf.RunWithContext(ctx)
			}()
			defer func() {
				cancel()
				<-done
			}()
			select {
			case err := <-errs:
				if !errors.Is(err, gvrfactory.ErrNoClient) {
					t.Fatalf("the list failed with %v, want ErrNoClient", err)
				}
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
			if inf.HasSynced() {
				t.Fatal("an informer without a client says it has synced")
			}
			if n := len(inf.GetStore().List()); n != 0 {
				t.Fatalf("%d objects cached", n)
			}
		})
	}
}
