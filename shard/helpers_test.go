package shard

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testObject is an object with a namespace and a uid, as the server's
// sharding.Selector.Matches and this package's Matcher both read them.
func testObject(ns, uid string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x", UID: types.UID(uid)}}
}
