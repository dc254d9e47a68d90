package informer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/store"
)

// MovedAwayHandler is implemented by a handler that wants to tell an
// object that left the informer's part of the resource from an object
// deleted on the server. With a source that serves a part of a resource
// and says which objects are in it (an [Owner], such as shard.Source), a
// relist that no longer finds an object deletes it from the cache either
// way; the informer then calls OnMovedAway instead of OnDelete for a
// handler that implements this interface when the source no longer owns
// the object (it moved to another replica), and OnDelete as usual when it
// still does (the object was deleted while the watch was down). A handler
// without the method gets OnDelete(obj, true) in both cases.
//
// The source is asked when the notification is delivered: a part that
// changes back in between makes a move look like a deletion, or the other
// way round.
type MovedAwayHandler[T any] interface {
	Handler[T]
	// OnMovedAway is called with the last cached state of an object that
	// is gone from the cache because the source stopped serving it.
	OnMovedAway(obj T)
}

// Owner is implemented by a source (Options.Source) that serves a part of
// a resource and can say whether an object is in it now; shard.Source is
// one. See [MovedAwayHandler].
type Owner interface {
	Owns(obj metav1.Object) bool
}

// movedAwaySplitter passes a handler's calls on, sending the
// final-state-unknown deletions of objects its source no longer owns to
// OnMovedAway.
type movedAwaySplitter[T store.Object] struct {
	MovedAwayHandler[T]
	owner Owner
}

func (m movedAwaySplitter[T]) OnDelete(obj T, finalStateUnknown bool) {
	if finalStateUnknown && !nilcheck.Is(obj) && !m.owner.Owns(obj) {
		m.OnMovedAway(obj)
		return
	}
	m.MovedAwayHandler.OnDelete(obj, finalStateUnknown)
}

// withMovedAway wraps h when it implements MovedAwayHandler and src is an
// Owner; otherwise it returns h.
func withMovedAway[T store.Object](h Handler[T], src any) Handler[T] {
	mh, ok := h.(MovedAwayHandler[T])
	owner, isOwner := sourceAs[Owner](src)
	if !ok || !isOwner {
		return h
	}
	return movedAwaySplitter[T]{MovedAwayHandler: mh, owner: owner}
}

// Leaver is implemented by a source (Options.Source) whose scope can
// change while the informer runs, such as scope.Source: a relist under a
// narrower scope leaves out the objects that left it, and the informer
// deletes them from the cache like any object a relist no longer has. For
// an object for which Left is true the deletion is told with its final
// state known, OnDelete(obj, false), with its last cached state: the
// informer watched it until it left, so that state is the last it had in
// scope. Other objects a relist no longer has (deleted on the server
// while the watch was down) are told with finalStateUnknown, as always.
// The source is asked when the relist is applied to the cache.
type Leaver interface {
	Left(obj metav1.Object) bool
}
