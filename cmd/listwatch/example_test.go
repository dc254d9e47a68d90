package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The demo's final check compares the informer's cache with a consistent
// list from the server, by key and resource version.
func Example_finalCheck() {
	cm := func(name, rv string) corev1.ConfigMap {
		return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	a, b, c := cm("a", "5"), cm("b", "7"), cm("c", "9")
	server := &corev1.ConfigMapList{Items: []corev1.ConfigMap{cm("a", "5"), cm("b", "8"), cm("d", "9")}}
	for _, line := range diffCache([]*corev1.ConfigMap{&a, &b, &c}, server) {
		fmt.Println(line)
	}
	// Output:
	// missing from cache: ns/d (rv 9)
	// only in cache: ns/c (rv 9)
	// stale in cache: ns/b cache rv 7, server rv 8
}
