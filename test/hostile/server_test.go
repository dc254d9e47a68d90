package hostile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// behaviour is what the server does with one request. The set is closed;
// behaviour 0 (healthy) is what a well-behaved kube-apiserver does.
type behaviour int

const (
	healthy behaviour = iota
	// Failures when the request is made.
	failInternal  // 500
	failThrottle  // 429 with Retry-After 1s
	failExpired   // 410 Gone
	failForbidden // 403
	// Watch misbehaviour, after the watch opened.
	closeAtOnce       // closes with no event
	bookmarkThenClose // one valid bookmark, then closes
	fewThenClose      // up to three events, then closes
	errorEvent410     // an ERROR event carrying 410, then closes
	errorEvent500     // an ERROR event carrying 500, then closes
	badRVBookmark     // a bookmark whose resourceVersion is not a number, then closes
	emptyRVBookmark   // a bookmark without a resourceVersion, then closes
	badRVEvent        // an event whose object's resourceVersion is not a number, then closes
	replay            // replays the log from the beginning, then carries on
	closeSoon         // follows for a while (0.1 to 9.9 s), then closes
	cutStream         // streaming list: some initial events, then closes
	dropEndBookmark   // streaming list: every initial event, never the end bookmark
	// List misbehaviour.
	repeatContinue // the next page's continue token is the one just used
	emptyListRV    // a list whose resourceVersion is ""
	junkItems      // an item without a name and an item of the wrong type
	numBehaviours
)

var behaviourNames = [...]string{
	"healthy", "500", "429", "410", "403", "closeAtOnce", "bookmarkThenClose", "fewThenClose",
	"error410", "error500", "badRVBookmark", "emptyRVBookmark", "badRVEvent", "replay", "closeSoon", "cutStream",
	"dropEndBookmark", "repeatContinue", "emptyListRV", "junkItems",
}

func (b behaviour) String() string { return behaviourNames[b] }

// entry is one change in the server's history.
type entry struct {
	typ watch.EventType
	obj *corev1.ConfigMap // a private copy; its RV is the change's
}

// request is one List or Watch call the server received.
type request struct {
	at   time.Time
	what string // "list", "list-continue", "watch", "stream"
	how  behaviour
}

// server is an in-memory API server for ConfigMaps in one namespace that
// misbehaves on purpose. While hostile, each request draws a behaviour at
// random; afterwards every request is served like kube-apiserver would.
// It keeps the whole history (no compaction), so the truth at any moment
// is known exactly. Safe for concurrent use.
type server struct {
	mu      sync.Mutex
	rng     *rand.Rand
	hostile bool
	// force, when not healthy, is the only misbehaviour: every request
	// that can show it does; the others are served healthy.
	force behaviour
	rv    uint64
	objs  map[string]*corev1.ConfigMap
	log   []entry
	// changed is closed and replaced at every write: watchers wait on it.
	changed chan struct{}
	// pages holds the remaining items of each paginated list, by token.
	pages    map[string]pageState
	tokens   int
	requests []request
	// future, when not zero, is a resource version the server never
	// issued that the next watch to follow the log sends as a bookmark,
	// then clears (sendFuture).
	future uint64
	// runaway is set when a client made runawayLimit requests within one
	// virtual second: from then on every request blocks until its
	// context ends, so a client that loops without waiting cannot spin
	// the test for ever (under synctest its loop would never let time
	// advance).
	runaway bool
}

const runawayLimit = 1000

func newServer(seed uint64) *server {
	return &server{
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		hostile: true,
		rv:      100,
		objs:    map[string]*corev1.ConfigMap{},
		changed: make(chan struct{}),
		pages:   map[string]pageState{},
	}
}

// setHostile switches the server's misbehaviour on or off.
func (s *server) setHostile(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostile = on
}

// churn makes one random write: create, update or delete of one of n names.
func (s *server) churn(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := fmt.Sprintf("cm-%02d", s.rng.IntN(n))
	old, exists := s.objs[name]
	s.rv++
	rv := rvString(s.rv)
	switch {
	case !exists:
		s.write(watch.Added, newConfigMap(name, rv, 0))
	case s.rng.IntN(4) == 0:
		s.write(watch.Deleted, newConfigMap(name, rv, gen(old)))
	default:
		s.write(watch.Modified, newConfigMap(name, rv, gen(old)+1))
	}
}

func (s *server) write(typ watch.EventType, obj *corev1.ConfigMap) {
	if typ == watch.Deleted {
		delete(s.objs, obj.Name)
	} else {
		s.objs[obj.Name] = obj
	}
	s.log = append(s.log, entry{typ: typ, obj: obj})
	close(s.changed)
	s.changed = make(chan struct{})
}

func rvString(rv uint64) string { return strconv.FormatUint(rv, 10) }

func gen(cm *corev1.ConfigMap) int { n, _ := strconv.Atoi(cm.Data["gen"]); return n }

func newConfigMap(name, rv string, g int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv, UID: types.UID("uid-" + name)},
		Data:       map[string]string{"gen": strconv.Itoa(g)},
	}
}

// sendFuture makes the open watch send one bookmark ahead resource
// versions beyond the server's current one, as a broken server or proxy
// might, and then follow on as before: the watch stays quiet until the
// next write. It returns that resource version.
func (s *server) sendFuture(ahead uint64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.future = s.rv + ahead
	close(s.changed)
	s.changed = make(chan struct{})
	return rvString(s.future)
}

// current returns the server's current resource version.
func (s *server) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rvString(s.rv)
}

// truth returns the server's objects as name → resource version.
func (s *server) truth() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.objs))
	for k, o := range s.objs {
		out[k] = o.ResourceVersion
	}
	return out
}

// history returns a copy of the requests received so far.
func (s *server) history() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// draw records a request and picks its behaviour among allowed (plus
// healthy, which is always allowed). Callers hold s.mu.
func (s *server) draw(what string, allowed ...behaviour) behaviour {
	b := healthy
	switch {
	case !s.hostile:
	case s.force != healthy:
		if slices.Contains(allowed, s.force) {
			b = s.force
		}
	case len(allowed) > 0 && s.rng.IntN(4) != 0:
		b = allowed[s.rng.IntN(len(allowed))]
	}
	s.requests = append(s.requests, request{at: time.Now(), what: what, how: b})
	if n := len(s.requests); n >= runawayLimit && s.requests[n-1].at.Sub(s.requests[n-runawayLimit].at) < time.Second {
		s.runaway = true
	}
	return b
}

// stall blocks a request until ctx ends once the client has run away.
func (s *server) stall(ctx context.Context) error {
	s.mu.Lock()
	r := s.runaway
	s.mu.Unlock()
	if !r {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// ranAway reports whether a client made runawayLimit requests within one
// virtual second.
func (s *server) ranAway() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runaway
}

var gr = schema.GroupResource{Resource: "configmaps"}

// failure is the error a request-time failure behaviour returns, if any.
func failure(b behaviour) error {
	switch b {
	case failInternal:
		return apierrors.NewInternalError(fmt.Errorf("hostile: internal error"))
	case failThrottle:
		return apierrors.NewTooManyRequests("hostile: slow down", 1)
	case failExpired:
		return apierrors.NewResourceExpired("hostile: too old resource version")
	case failForbidden:
		return apierrors.NewForbidden(gr, "", fmt.Errorf("hostile: not today"))
	}
	return nil
}

// validRV reports whether a client-sent resource version is one this
// server could serve: "" or a decimal number not ahead of the server.
func (s *server) validRV(rv string) error {
	if rv == "" {
		return nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("invalid resource version %q", rv))
	}
	if n > s.rv {
		return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", n, s.rv), 1)
	}
	return nil
}

// ListWithContext serves a list, paginated when Limit is set.
func (s *server) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	if err := s.stall(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Continue != "" {
		return s.nextPage(o)
	}
	b := s.draw("list", failInternal, failThrottle, failExpired, failForbidden, repeatContinue, emptyListRV, junkItems)
	if err := failure(b); err != nil {
		return nil, err
	}
	if err := s.validRV(o.ResourceVersion); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(s.objs))
	for k := range s.objs {
		names = append(names, k)
	}
	slices.Sort(names)
	items := make([]runtime.Object, 0, len(names)+2)
	for _, k := range names {
		items = append(items, s.objs[k])
	}
	if b == junkItems {
		items = append(items, newConfigMap("", rvString(s.rv), 0)) // no name: unkeyable
	}
	rv := rvString(s.rv)
	if b == emptyListRV {
		rv = ""
	}
	return s.page(items, rv, o.Limit, b == repeatContinue)
}

// page answers the first limit items and keeps the rest under a new
// continue token. A sticky token answers the same page and the same token
// again for ever: a server whose continue token repeats.
func (s *server) page(items []runtime.Object, rv string, limit int64, sticky bool) (runtime.Object, error) {
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	if limit > 0 && int64(len(items)) > limit {
		s.tokens++
		list.Continue = fmt.Sprintf("token-%d", s.tokens)
		s.pages[list.Continue] = pageState{rest: items[limit:], rv: rv, sticky: sticky}
		items = items[:limit]
	}
	for _, it := range items {
		list.Items = append(list.Items, *it.(*corev1.ConfigMap))
	}
	return list, nil
}

// pageState is what a continue token stands for.
type pageState struct {
	rest   []runtime.Object
	rv     string
	sticky bool
}

func (s *server) nextPage(o metav1.ListOptions) (runtime.Object, error) {
	b := s.draw("list-continue", failInternal, repeatContinue)
	if err := failure(b); err != nil {
		return nil, err
	}
	st, ok := s.pages[o.Continue]
	if !ok {
		return nil, apierrors.NewResourceExpired("hostile: continue token unknown")
	}
	if st.sticky {
		list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: st.rv, Continue: o.Continue}}
		for _, it := range st.rest[:min(int64(len(st.rest)), max(o.Limit, 1))] {
			list.Items = append(list.Items, *it.(*corev1.ConfigMap))
		}
		return list, nil
	}
	delete(s.pages, o.Continue)
	return s.page(st.rest, st.rv, o.Limit, b == repeatContinue)
}
