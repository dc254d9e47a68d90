package informer

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"
)

// ownerSource is a source that owns part of the resource, as shard.Source
// does.
type ownerSource struct{}

func (ownerSource) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, nil
}
func (ownerSource) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, nil
}
func (ownerSource) List(metav1.ListOptions) (runtime.Object, error)   { return nil, nil }
func (ownerSource) Watch(metav1.ListOptions) (watch.Interface, error) { return nil, nil }
func (ownerSource) Owns(metav1.Object) bool                           { return true }

// An Owner is found through reflector.FromListerWatcher's adapter, which
// the clientgo/ drop-ins and crcache put around every source: Fresh and
// WaitForResourceVersion must never list through a sharded source they
// cannot see, and moved-away handlers must see its ownership.
func TestSourceAsThroughAdapters(t *testing.T) {
	adapted := reflector.FromListerWatcher(ownerSource{})
	if _, ok := adapted.(Owner); ok {
		t.Fatal("the adapter itself is an Owner: the test tests nothing")
	}
	if _, ok := sourceAs[Owner](adapted); !ok {
		t.Fatal("the Owner under the adapter is not found")
	}
	if _, ok := sourceAs[CurrentResourceVersioner](adapted); ok {
		t.Fatal("found a CurrentResourceVersioner that is not there")
	}
	if _, ok := sourceAs[Owner](nil); ok {
		t.Fatal("nil is an Owner")
	}
}
