package ondemand

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/store"
)

// Unlimited is the Budget that never demotes an object for its bytes.
const Unlimited int64 = -1

// Options configures [New]. Metadata and Fetcher are required.
type Options[T store.Object] struct {
	// Name labels logs and errors. Default the resource's name.
	Name string
	// Resource names the resource in the errors a read returns (a
	// NotFound for an object the metadata cache does not hold), e.g.
	// {Resource: "secrets"}.
	Resource schema.GroupResource
	// Metadata is the cache of every object's metadata ([MetadataOf] a
	// typed informer): it decides which objects exist, lists, indexes and
	// handlers run on it, and the Cache registers a handler on it to
	// forget the whole form of objects that change or go away. The
	// caller runs it (alone or in a factory); it must select the same
	// objects as Fetcher reads.
	Metadata Metadata
	// Fetcher reads whole objects from the server; [FromClient] builds one
	// from a typed client-go client.
	Fetcher Fetcher[T]
	// Budget is the most bytes of whole objects held (as
	// [store.ObjectBytes] counts them); past it the least recently read
	// go back to metadata only. 0 holds none: every read fetches, and
	// only metadata is cached. [Unlimited] (or any negative value) sets
	// no limit.
	Budget int64
	// IdleAfter is how long a held object may go unread before it goes
	// back to metadata only; 0 never demotes for idleness. Demotion for
	// idleness runs in [Cache.Run].
	IdleAfter time.Duration
	// Hold selects objects held whole from the start (e.g. by a label the
	// program puts on what it owns): Run lists them once after the
	// metadata cache has synced and fetches each that later starts to
	// match or changes, so that their reads never wait for the server.
	// They are never demoted for idleness; the Budget applies to them too.
	// Nil holds none ahead of a read.
	Hold labels.Selector
	// Transform is applied to every fetched object before it is held or
	// returned (e.g. informer.StripManagedFields). It may modify the
	// object in place; an error fails the read.
	Transform func(T) (T, error)
	// Retries is how many times a read fetches again when the server
	// answers with an object older than the cached metadata (a broken or
	// lagging server; never kube-apiserver's quorum reads). Default 2.
	Retries int
	// Clock stamps reads and drives idle demotion. Default the real clock.
	Clock clock.WithTicker
	// Metrics, when set, is told of every fetch, promotion and demotion.
	Metrics Metrics
}

// Fetcher reads whole objects from the server. Both methods must be safe
// for concurrent use and return the server's errors as they are
// (k8s.io/apimachinery/pkg/api/errors recognises them).
type Fetcher[T store.Object] interface {
	// Get reads one object (namespace "" for a cluster-scoped one).
	Get(ctx context.Context, namespace, name string) (T, error)
	// List reads every object of namespace ("" for all) that opts
	// selects, all pages.
	List(ctx context.Context, namespace string, opts metav1.ListOptions) ([]T, error)
}

// Metrics is told what a [Cache] does. Its methods are called on the
// goroutine that did it, outside the Cache's locks; they must be cheap.
type Metrics interface {
	// Fetched is called after every fetch of one object: how long it took
	// and its error (nil on success).
	Fetched(d time.Duration, err error)
	// Promoted is called when an object starts to be held whole.
	Promoted()
	// Demoted is called when a held object goes back to metadata only.
	Demoted(reason DemoteReason)
}

// DemoteReason says why a held object went back to metadata only.
type DemoteReason string

const (
	// DemotedIdle: not read for Options.IdleAfter.
	DemotedIdle DemoteReason = "Idle"
	// DemotedBudget: the least recently read when the held bytes passed
	// Options.Budget.
	DemotedBudget DemoteReason = "Budget"
	// DemotedChanged: its metadata moved past the held version; the next
	// read fetches the new one.
	DemotedChanged DemoteReason = "Changed"
	// DemotedDeleted: the object went away.
	DemotedDeleted DemoteReason = "Deleted"
)
