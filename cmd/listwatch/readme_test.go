package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/workqueue"
)

// readmeQuickStart is the README's quick start, kept here so that it
// compiles; it is not run.
func readmeQuickStart(ctx context.Context, cs kubernetes.Interface) error {
	inf, err := informer.New(informer.Options[*corev1.Pod]{
		Source:    reflector.FromClient[*corev1.PodList](cs.CoreV1().Pods("")),
		Transform: informer.StripManagedFields[*corev1.Pod],
	})
	if err != nil {
		return err
	}
	queue := workqueue.New(ctx, workqueue.Options[string]{Name: "pods"})
	key := func(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
	inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { queue.Add(key(p)) },
		UpdateFunc: func(_, p *corev1.Pod) { queue.Add(key(p)) },
		DeleteFunc: func(p *corev1.Pod, _ bool) { queue.Add(key(p)) }, // typed: no tombstone
	}, informer.HandlerOptions{})
	go inf.Run(ctx)
	if err := inf.WaitForSync(ctx); err != nil {
		return err // says why: "forbidden", "the server could not find the requested resource", ...
	}
	for {
		k, shutdown := queue.Get()
		if shutdown {
			return nil
		}
		// reconcile k, reading from inf.Reader().Namespace(ns).Get(name) ...
		queue.Done(k)
	}
}

var _ = readmeQuickStart
