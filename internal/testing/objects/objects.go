// Package objects builds the Kubernetes objects and list-watches that
// listwatch's tests share: small ConfigMaps and Pods named by namespace and
// name (Pod, ConfigMap, with Options for the fields the tests vary),
// realistic pods as a Deployment's replicas look on a real cluster
// (RealisticPod), and a ListerWatcher that tells client-go's reflector it
// cannot serve streaming lists (NoWatchList).
//
// For tests only: no non-test code imports it, and it imports no listwatch
// package, so that every package's tests, internal or external, can use it.
// Examples keep their own builders: an example is documentation, and its
// reader cannot import an internal package.
package objects

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An Option sets one field of an object a builder makes.
type Option func(metav1.Object)

// RV sets the resourceVersion.
func RV(rv string) Option { return func(o metav1.Object) { o.SetResourceVersion(rv) } }

// Labels sets the labels (nil: none).
func Labels(l map[string]string) Option { return func(o metav1.Object) { o.SetLabels(l) } }

// Data sets a ConfigMap's data to the pairs kv (key, value, key, value...).
// On anything but a ConfigMap, or with an odd number of strings, the
// builder panics.
func Data(kv ...string) Option {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("objects.Data: %d strings, want key-value pairs", len(kv)))
	}
	return func(o metav1.Object) {
		cm, ok := o.(*corev1.ConfigMap)
		if !ok {
			panic(fmt.Sprintf("objects.Data on a %T, want a *corev1.ConfigMap", o))
		}
		cm.Data = make(map[string]string, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			cm.Data[kv[i]] = kv[i+1]
		}
	}
}

// Node sets a Pod's spec.nodeName. On anything but a Pod the builder
// panics.
func Node(node string) Option {
	return func(o metav1.Object) {
		p, ok := o.(*corev1.Pod)
		if !ok {
			panic(fmt.Sprintf("objects.Node on a %T, want a *corev1.Pod", o))
		}
		p.Spec.NodeName = node
	}
}

// Pod returns the pod ns/name with opts applied; nothing else is set.
func Pod(ns, name string, opts ...Option) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	apply(p, opts)
	return p
}

// ConfigMap returns the ConfigMap ns/name with opts applied; nothing else
// is set.
func ConfigMap(ns, name string, opts ...Option) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	apply(cm, opts)
	return cm
}

func apply(o metav1.Object, opts []Option) {
	for _, opt := range opts {
		opt(o)
	}
}
