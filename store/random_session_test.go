package store

import (
	"fmt"
	"strconv"

	"k8s.io/client-go/tools/cache"
)

// session runs an incremental replace on the typed store, checking every
// read after every sub-step. client-go has no such operation, so its stores
// get the equivalent: each session upsert is an Update (with the resource
// version restored, since session upserts do not record one), and Commit is
// a Delete of every unwritten key followed by a Bookmark.
func (f *fixture) session() string {
	f.ref.inSession, f.ref.written = true, map[string]bool{}
	sess := f.typed.BeginReplace()
	n := f.rng.IntN(10)
	for i := range n {
		switch f.rng.IntN(6) {
		case 0:
			f.upsert() // ordinary writes during a session count as seen
		case 1:
			f.delete()
		default:
			p := f.randPod()
			f.ref.sessionUpsert(p)
			f.must("session upsert", sess.Upsert(p), f.dropIn.Update(p), f.cg.Update(p))
			f.dropIn.Bookmark(f.ref.rv)
			f.cg.Bookmark(f.ref.rv)
		}
		f.check(fmt.Sprintf("session step %d", i))
	}
	if f.rng.IntN(4) == 0 {
		sess.Abort()
		f.ref.inSession = false
		if _, err := sess.Commit("0"); err != ErrReplaceClosed {
			f.t.Fatalf("Commit after Abort: %v, want ErrReplaceClosed", err)
		}
		return fmt.Sprintf("session of %d aborted", n)
	}
	f.rv++
	rv := strconv.Itoa(f.rv)
	gone := f.ref.commit(rv)
	deleted, err := sess.Commit(rv)
	f.must("commit", err)
	if deleted != len(gone) {
		f.t.Fatalf("Commit deleted %d, want %d (%v)", deleted, len(gone), gone)
	}
	for _, idx := range []cache.Indexer{f.dropIn, f.cg} {
		for _, key := range gone {
			obj, _, _ := idx.GetByKey(key)
			f.must("commit delete", idx.Delete(obj))
		}
		idx.Bookmark(rv)
	}
	if err := sess.Upsert(f.randPod()); err != ErrReplaceClosed {
		f.t.Fatalf("Upsert after Commit: %v, want ErrReplaceClosed", err)
	}
	return fmt.Sprintf("session of %d committed, %d deleted", n, len(gone))
}

// transaction applies a random batch through the drop-in's and client-go's
// Transaction, and one op at a time to the typed store and the reference.
func (f *fixture) transaction() string {
	var txns []cache.Transaction
	for range 1 + f.rng.IntN(5) {
		p := f.randPod()
		typ := cache.TransactionTypeUpdate
		switch f.rng.IntN(3) {
		case 0:
			typ = cache.TransactionTypeDelete
			f.ref.delete(p)
			f.must("txn delete", f.typed.Delete(p))
		case 1:
			typ = cache.TransactionTypeAdd
			fallthrough
		default:
			f.ref.upsert(p)
			f.must("txn upsert", f.typed.Upsert(p))
		}
		txns = append(txns, cache.Transaction{Type: typ, Object: p})
	}
	for _, idx := range []cache.Indexer{f.dropIn, f.cg} {
		if err := idx.(cache.TransactionStore).Transaction(txns...); err != nil {
			f.t.Fatalf("Transaction: %v", err)
		}
	}
	return fmt.Sprintf("transaction of %d", len(txns))
}
