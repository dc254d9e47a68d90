package informer

// Handler receives one object type's notifications, typed. Calls for one
// handler are never concurrent and, per key, come in the order the changes
// happened.
type Handler[T any] interface {
	// OnAdd is called for an object the handler has not seen. inInitialList
	// is true for objects of the initial list, including the replay of the
	// cache to a handler added after the informer started.
	OnAdd(obj T, inInitialList bool)
	// OnUpdate is called with the object the handler saw last and the newest.
	// On a resync, old and new are the same object.
	OnUpdate(old, new T)
	// OnDelete is called with the last known state of a deleted object.
	// finalStateUnknown is true when the deletion was noticed by a relist
	// rather than seen: obj is then the last state the informer had, and the
	// object may have changed before it was deleted.
	OnDelete(obj T, finalStateUnknown bool)
}

// HandlerFuncs adapts functions to Handler; nil fields ignore their events.
type HandlerFuncs[T any] struct {
	AddFunc    func(obj T, inInitialList bool)
	UpdateFunc func(old, new T)
	DeleteFunc func(obj T, finalStateUnknown bool)
}

func (h HandlerFuncs[T]) OnAdd(obj T, inInitialList bool) {
	if h.AddFunc != nil {
		h.AddFunc(obj, inInitialList)
	}
}

func (h HandlerFuncs[T]) OnUpdate(old, new T) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(old, new)
	}
}

func (h HandlerFuncs[T]) OnDelete(obj T, finalStateUnknown bool) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj, finalStateUnknown)
	}
}

// FilteringHandler passes on only objects that satisfy Filter, turning an
// object that crosses the filter into an add (it starts to match) or a
// delete (it stops matching; finalStateUnknown false, with the old object,
// the last one the inner handler saw).
type FilteringHandler[T any] struct {
	Filter  func(obj T) bool
	Handler Handler[T]
}

func (f FilteringHandler[T]) OnAdd(obj T, inInitialList bool) {
	if f.Filter(obj) {
		f.Handler.OnAdd(obj, inInitialList)
	}
}

func (f FilteringHandler[T]) OnUpdate(old, new T) {
	was, is := f.Filter(old), f.Filter(new)
	switch {
	case was && is:
		f.Handler.OnUpdate(old, new)
	case is:
		f.Handler.OnAdd(new, false)
	case was:
		f.Handler.OnDelete(old, false)
	}
}

func (f FilteringHandler[T]) OnDelete(obj T, finalStateUnknown bool) {
	if f.Filter(obj) {
		f.Handler.OnDelete(obj, finalStateUnknown)
	}
}
