package store

import "fmt"

// Replace makes items the whole content of the store and records rv, in one
// critical section, so readers see either the old or the new content.
//
// It works in place (mark and sweep): it upserts every item, marking it,
// then deletes the entries it did not mark. Unchanged objects keep their
// entries and index postings, and no second map of the data is built. The
// only extra memory is one key string per item for the duration of the call.
//
// If any item has no key, Replace fails and changes nothing. Items an index
// function rejects are left out (any older object under their key is
// deleted) and their errors are joined into the result. Replace closes any
// open ReplaceSession.
func (s *Store[T]) Replace(items []T, rv string) error {
	keys := make([]string, len(items))
	for i, obj := range items {
		key, err := s.key(obj)
		if err != nil {
			return fmt.Errorf("replace item %d: %w", i, err)
		}
		keys[i] = key
	}
	return s.r.c.replace(keys, items, rv)
}

// BeginReplace opens an incremental replace: Upsert each listed object (a
// list page at a time, say), then Commit deletes every object that was not
// written since BeginReplace. Nothing has to hold the whole list at once.
//
// Consistency trade-off: the session is not atomic. Until Commit, readers
// see a mix: objects already upserted in their new version, objects not yet
// listed in their old version, and objects that the list will not contain
// still present. Use Replace when readers must never see a mix.
//
// Ordinary writes during a session count as seen, so an object added by a
// concurrent Upsert survives the Commit. Opening a session (or calling
// Replace) closes the previous one: its Upsert and Commit then return
// ErrReplaceClosed.
func (s *Store[T]) BeginReplace() *ReplaceSession[T] {
	return &ReplaceSession[T]{s: s, gen: s.r.c.begin()}
}

// ReplaceSession is an open incremental replace; see Store.BeginReplace.
type ReplaceSession[T Object] struct {
	// s is the store being replaced.
	s *Store[T]
	// gen is this session's generation; the session is open while the
	// core's session field equals it.
	gen uint32
}

// Upsert stores obj as part of the session. It does not record obj's
// resource version: Commit records the list's.
func (r *ReplaceSession[T]) Upsert(obj T) error {
	key, err := r.s.key(obj)
	if err != nil {
		return err
	}
	return r.s.r.c.sessionUpsert(r.gen, key, obj)
}

// Commit deletes every object not written since the session began, records
// rv and closes the session. It returns how many objects it deleted.
func (r *ReplaceSession[T]) Commit(rv string) (deleted int, err error) {
	return r.s.r.c.commit(r.gen, rv)
}

// Abort closes the session without deleting anything. Objects it upserted
// stay. Aborting a closed session is a no-op.
func (r *ReplaceSession[T]) Abort() { r.s.r.c.abort(r.gen) }
