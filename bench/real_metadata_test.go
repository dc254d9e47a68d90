package bench

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	lwmetadatainformer "github.com/listwatch/listwatch/clientgo/metadata/metadatainformer"
)

// The metadata-only factory door (issue 38): kube-controller-manager
// caches the metadata of every resource through metadatainformer's
// factory with a transform that trims managedFields (its trim, below);
// measured as written for client-go (the baseline) and with the import
// prefix changed to listwatch's clientgo tree, whose factory decodes with
// restsource through the metadata client's REST client, its memory
// options on by default. The metadata client always asks for protobuf, so
// the encoding does not matter; a factory lists as its informers do by
// default (a streaming list).
func init() {
	registerRealSubject(realSubject{name: "client-go-metadata-factory", kinds: realKindsAll, streamOnly: true,
		start: func(ctx context.Context, env realEnv) (*realRun, error) {
			mc, err := metadata.NewForConfig(env.cfg)
			if err != nil {
				return nil, err
			}
			f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, metav1.NamespaceAll, selectorTweak(env))
			return runMetadataFactory(ctx, env, f)
		}})
	registerRealSubject(realSubject{name: "listwatch-metadata-factory", baseline: "client-go-metadata-factory", kinds: realKindsAll, streamOnly: true,
		start: func(ctx context.Context, env realEnv) (*realRun, error) {
			mc, err := metadata.NewForConfig(env.cfg)
			if err != nil {
				return nil, err
			}
			f := lwmetadatainformer.NewFilteredSharedInformerFactory(mc, 0, metav1.NamespaceAll, selectorTweak(env))
			return runMetadataFactory(ctx, env, f)
		}})
}

func selectorTweak(env realEnv) func(*metav1.ListOptions) {
	return func(o *metav1.ListOptions) { o.LabelSelector = env.selector }
}

// runMetadataFactory runs f's informer for env's kind with
// kube-controller-manager's transform.
func runMetadataFactory(ctx context.Context, env realEnv, f metadatainformer.SharedInformerFactory) (*realRun, error) {
	inf := f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: env.kind}).Informer()
	if err := inf.SetTransform(kcmTrim); err != nil {
		return nil, err
	}
	return runFactoryInformer(ctx, env, inf, f.Start, f.Shutdown)
}

// kcmTrim is kube-controller-manager's transform of its informer
// factories (cmd/kube-controller-manager/app, CreateControllerContext).
func kcmTrim(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

var _ cache.TransformFunc = kcmTrim
