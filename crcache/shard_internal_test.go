package crcache

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/shard"
)

// stubInformer is the informer under a shardedInformer: a store, and the
// handler registered last, which the test drives.
type stubInformer struct {
	toolscache.SharedIndexInformer
	store   toolscache.Store
	handler toolscache.ResourceEventHandler
}

func (s *stubInformer) GetStore() toolscache.Store { return s.store }

func (s *stubInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	s.handler = h
	return new(stubRegistration), nil
}

func (s *stubInformer) RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error {
	return nil
}

type stubRegistration struct {
	toolscache.ResourceEventHandlerRegistration
}

// heard records what a controller-side handler was told, in order.
type heard struct {
	mu  sync.Mutex
	got []string
}

func (h *heard) add(what string, obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		what, obj = what+"(unknown)", d.Obj
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, what+" "+obj.(*corev1.ConfigMap).Name)
}

func (h *heard) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.got
	h.got = nil
	slices.Sort(out)
	return out
}

// A sharded informer's handlers hear the adds, updates and moves of owned
// objects only and every deletion on the server; on a Change, the cached
// objects of the slices gained are told again as adds, and a removed
// handler hears nothing more.
func TestShardedInformerHandlers(t *testing.T) {
	before := shard.MustAssign([]string{"m0", "m1"}, shard.Options{Slices: 16})
	after := shard.MustAssign([]string{"m0"}, shard.Options{Slices: 16})
	ours, _ := before.Matcher("m0", shard.FieldUID)
	// 40 ConfigMaps, every one cached (m0 keeps m1's as in a handover).
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	var mine, theirs []*corev1.ConfigMap
	for i := range 40 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprintf("cm%02d", i), UID: types.UID(uuid.NewUUID())}}
		if err := store.Add(cm); err != nil {
			t.Fatal(err)
		}
		if ours.Owns(cm) {
			mine = append(mine, cm)
		} else {
			theirs = append(theirs, cm)
		}
	}
	if len(mine) == 0 || len(theirs) == 0 {
		t.Fatalf("uuids all on one side: %d, %d", len(mine), len(theirs))
	}
	src, err := shard.NewSource(t.Context(), shard.SourceOptions{Inner: &toolscache.ListWatch{}})
	if err != nil {
		t.Fatal(err)
	}
	src.Update(shard.Change{Member: "m0", Assignment: before})
	stub := &stubInformer{store: store}
	p := &shardedInformer{SharedIndexInformer: stub, src: src, field: shard.FieldUID}
	var h heard
	reg, err := p.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.add("add", obj) },
		UpdateFunc: func(_, obj any) { h.add("update", obj) },
		DeleteFunc: func(obj any) { h.add("delete", obj) },
	})
	if err != nil {
		t.Fatal(err)
	}

	in := stub.handler
	m, o := mine[0], theirs[0]
	in.OnAdd(m, true)
	in.OnAdd(o, true)
	in.OnUpdate(m, m)
	in.OnUpdate(o, o)
	in.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "a/" + o.Name, Obj: o}) // moved away
	in.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "a/" + m.Name, Obj: m}) // found deleted by a relist
	in.OnDelete(o)                                                               // deleted on the server while handed over
	want := []string{"add " + m.Name, "delete " + o.Name, "delete(unknown) " + m.Name, "update " + m.Name}
	slices.Sort(want)
	if got := h.take(); !slices.Equal(got, want) {
		t.Errorf("heard\n %v\nwant\n %v", got, want)
	}

	// m1 leaves: m0 gains its slices, whose objects it still caches.
	diff, err := shard.DiffFor(before, after, "m0")
	if err != nil {
		t.Fatal(err)
	}
	c := shard.Change{Member: "m0", Assignment: after, Previous: before, Diff: diff}
	src.Update(c)
	p.replayGained(c)
	want = nil
	for _, cm := range theirs {
		want = append(want, "add "+cm.Name)
	}
	slices.Sort(want)
	if got := h.take(); !slices.Equal(got, want) {
		t.Errorf("after the gain, heard\n %v\nwant the cached objects of the gained slices\n %v", got, want)
	}
	in.OnUpdate(o, o)
	if got := h.take(); !slices.Equal(got, []string{"update " + o.Name}) {
		t.Errorf("an update of a gained object: heard %v", got)
	}

	if err := p.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	p.replayGained(c)
	if got := h.take(); len(got) != 0 {
		t.Errorf("a removed handler heard %v", got)
	}
}
