package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	lwworkqueue "github.com/listwatch/listwatch/clientgo/util/workqueue"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/workqueue"
)

// The code snippets of docs/migration.md, kept here so that they compile;
// they are not run.

// docsDropIn is step 1: client-go code with the import prefix changed
// (lwcache and lwworkqueue are clientgo/tools/cache and
// clientgo/util/workqueue, imported as cache and workqueue in the guide).
func docsDropIn(lw lwcache.ListerWatcher) {
	inf := lwcache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, lwcache.Indexers{})
	queue := lwworkqueue.NewTypedRateLimitingQueue(lwworkqueue.DefaultTypedControllerRateLimiter[string]())
	_, _ = inf, queue
}

func docsTyped(ctx context.Context, cs kubernetes.Interface, enqueue func(*corev1.ConfigMap)) error {
	f := factory.New(factory.Options{})
	inf, err := factory.Typed[*corev1.ConfigMap, *corev1.ConfigMapList](f, "configmaps", factory.Selection{},
		func(ns string) reflector.Client[*corev1.ConfigMapList] { return cs.CoreV1().ConfigMaps(ns) },
		informer.Options[*corev1.ConfigMap]{Transform: informer.StripManagedFields[*corev1.ConfigMap]})
	if err != nil {
		return err
	}
	inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { enqueue(cm) },
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) }, // last known state, always typed
	}, informer.HandlerOptions{})
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		return err // names the informer and the reason: forbidden, not found, ...
	}
	mode := informer.InOrder
	_, _ = inf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{Delivery: &mode})
	q := workqueue.New(ctx, workqueue.Options[string]{Name: "x", RateLimiter: workqueue.DefaultControllerRateLimiter[string]()})
	return q.AddWithOptions("k", workqueue.AddOptions{Priority: 10})
}

var _, _ = docsDropIn, docsTyped
