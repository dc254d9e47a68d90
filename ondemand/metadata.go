package ondemand

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/store"
)

// Metadata is what a [Cache] needs of the cache of every object's
// metadata: [MetadataOf] adapts listwatch's typed informer,
// [MetadataOfInformer] a client-go SharedIndexInformer of
// PartialObjectMetadata (the clientgo/ and crcache doors' informers).
type Metadata interface {
	// Get returns the cached metadata of key ("namespace/name", or
	// "name" for a cluster-scoped object).
	Get(key string) (metav1.Object, bool)
	// List returns the cached metadata of namespace ("" for all) that
	// sel matches.
	List(namespace string, sel labels.Selector) []metav1.Object
	// Notify has changed called for every add and update and deleted for
	// every delete, until stop.
	Notify(changed, deleted func(metav1.Object)) (stop func(), err error)
	// WaitForSync waits until the first list has been cached.
	WaitForSync(ctx context.Context) error
	// Footprint estimates what the metadata cache holds.
	Footprint() store.Footprint
}

// MetadataOf is the Metadata of a typed listwatch informer.
func MetadataOf(inf *informer.Informer[*metav1.PartialObjectMetadata]) Metadata {
	return typedMetadata{inf: inf, r: inf.Reader()}
}

type typedMetadata struct {
	inf *informer.Informer[*metav1.PartialObjectMetadata]
	r   store.Reader[*metav1.PartialObjectMetadata]
}

func (m typedMetadata) Get(key string) (metav1.Object, bool) {
	o, ok := m.r.GetByKey(key)
	return o, ok
}

func (m typedMetadata) List(namespace string, sel labels.Selector) []metav1.Object {
	var objs []*metav1.PartialObjectMetadata
	if namespace == "" {
		objs = m.r.ListBySelector(sel)
	} else {
		objs = m.r.Namespace(namespace).List(sel)
	}
	out := make([]metav1.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

func (m typedMetadata) Notify(changed, deleted func(metav1.Object)) (func(), error) {
	reg, err := m.inf.AddHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{
		AddFunc:    func(o *metav1.PartialObjectMetadata, _ bool) { changed(o) },
		UpdateFunc: func(_, o *metav1.PartialObjectMetadata) { changed(o) },
		DeleteFunc: func(o *metav1.PartialObjectMetadata, _ bool) { deleted(o) },
	}, informer.HandlerOptions{Name: "ondemand"})
	if err != nil {
		return nil, err
	}
	return reg.Remove, nil
}

func (m typedMetadata) WaitForSync(ctx context.Context) error { return m.inf.WaitForSync(ctx) }

func (m typedMetadata) Footprint() store.Footprint { return m.r.Footprint(0) }

func (m typedMetadata) snapshot() (informer.Snapshot, bool) { return m.inf.Snapshot(), true }

// MetadataOfInformer is the Metadata of a client-go SharedIndexInformer
// whose objects are metadata (any metav1.Object; a tombstone's last known
// object is unwrapped). Its indexer must have client-go's namespace index
// (cache.NamespaceIndex), as every informer a factory builds has. Its
// Footprint is that of a listwatch drop-in (informer.Snapshotter), else
// zero.
func MetadataOfInformer(inf toolscache.SharedIndexInformer) Metadata {
	return sharedMetadata{inf: inf}
}

type sharedMetadata struct {
	inf toolscache.SharedIndexInformer
}

func (m sharedMetadata) Get(key string) (metav1.Object, bool) {
	o, ok, err := m.inf.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	mo, ok := o.(metav1.Object)
	return mo, ok
}

func (m sharedMetadata) List(namespace string, sel labels.Selector) []metav1.Object {
	var objs []any
	if namespace == "" {
		objs = m.inf.GetIndexer().List()
	} else {
		var err error
		if objs, err = m.inf.GetIndexer().ByIndex(toolscache.NamespaceIndex, namespace); err != nil {
			return nil
		}
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		if mo, ok := o.(metav1.Object); ok && sel.Matches(labels.Set(mo.GetLabels())) {
			out = append(out, mo)
		}
	}
	return out
}

func (m sharedMetadata) Notify(changed, deleted func(metav1.Object)) (func(), error) {
	call := func(f func(metav1.Object), o any) {
		if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		if mo, ok := o.(metav1.Object); ok {
			f(mo)
		}
	}
	reg, err := m.inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { call(changed, o) },
		UpdateFunc: func(_, o any) { call(changed, o) },
		DeleteFunc: func(o any) { call(deleted, o) },
	})
	if err != nil {
		return nil, err
	}
	return func() { _ = m.inf.RemoveEventHandler(reg) }, nil
}

func (m sharedMetadata) WaitForSync(ctx context.Context) error {
	if !toolscache.WaitForCacheSync(ctx.Done(), m.inf.HasSynced) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return errors.New("ondemand: the metadata informer stopped before it synced")
	}
	return nil
}

func (m sharedMetadata) snapshot() (informer.Snapshot, bool) {
	if s, ok := m.inf.(informer.Snapshotter); ok {
		return s.Snapshot(), true
	}
	return informer.Snapshot{}, false
}

func (m sharedMetadata) Footprint() store.Footprint {
	if s, ok := m.inf.(informer.Snapshotter); ok {
		snap := s.Snapshot()
		return store.Footprint{Objects: snap.Objects, Bytes: snap.Bytes, BytesPerObject: snap.BytesPerObject}
	}
	return store.Footprint{Objects: len(m.inf.GetIndexer().ListKeys())}
}
