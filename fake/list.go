package fake

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listPlan is where a list reads from, decided before taking the lock.
type listPlan struct {
	// exact is set when the list must show the state at rv; otherwise it
	// shows the latest state.
	exact bool
	rv    uint64
	// start is the first key to include ("" for the first page).
	start string
	// limit is the page size; 0 means everything.
	limit int64
	// fromContinue is set when start came from a continue token.
	fromContinue bool
}

// list serves a list of one resource the way kube-apiserver does (see the
// package documentation for the resourceVersion semantics) and records it.
func (s *Server) list(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	s.stats.lists.Add(1)
	list, err := s.serveList(ctx, gvr, namespace, opts)
	call := Call{Verb: VerbList, Resource: gvr, Namespace: namespace, Options: opts, Err: err}
	if err == nil {
		lm, _ := meta.ListAccessor(list)
		call.ListResourceVersion = lm.GetResourceVersion()
	}
	s.record(ctx, call)
	return list, err
}

func (s *Server) serveList(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	injected, _ := s.injectedLocked(VerbList, gvr, namespace)
	s.mu.Unlock()
	if injected != nil {
		return nil, injected
	}
	r, err := s.resource(gvr)
	if err != nil {
		return nil, err
	}
	if err := validateOptions(opts, false); err != nil {
		return nil, err
	}
	pred, err := newPredicate(r, namespace, opts, s.opts.ShardSelectors)
	if err != nil {
		return nil, err
	}
	plan, err := s.planList(opts, namespace)
	if err != nil {
		return nil, err
	}
	if plan.rv > 0 {
		if err := s.waitFresh(ctx, plan.rv); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listLocked(r, pred, plan)
}

// planList interprets resourceVersion, resourceVersionMatch, limit and
// continue. A plan with rv > 0 needs the server to have reached rv.
func (s *Server) planList(opts metav1.ListOptions, namespace string) (listPlan, error) {
	plan := listPlan{limit: opts.Limit}
	if opts.Continue != "" {
		tok, err := decodeContinue(opts.Continue)
		if err != nil {
			return plan, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return plan, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		plan.start, plan.fromContinue = nsPrefix(namespace)+tok.Start, true
		if tok.RV > 0 {
			plan.exact, plan.rv = true, uint64(tok.RV)
		}
		return plan, nil
	}
	switch opts.ResourceVersion {
	case "":
		return plan, nil // consistent read of the latest state
	case "0":
		plan.limit = 0 // served from the watch cache, which ignores limit
		return plan, nil
	}
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return plan, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
	}
	plan.rv = rv
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchExact:
		plan.exact = true
	case "":
		plan.exact = opts.Limit > 0 // legacy: a paged list at RV N is exact
	}
	return plan, nil
}

// waitFresh waits until the server has reached rv, for at most
// TooLargeRVTimeout, and otherwise fails with 504 Too large resource version.
func (s *Server) waitFresh(ctx context.Context, rv uint64) error {
	var timeout <-chan time.Time
	for {
		s.mu.Lock()
		cur, advanced := s.rv, s.advanced
		s.mu.Unlock()
		if cur >= rv {
			return nil
		}
		if timeout == nil {
			t := s.clock.NewTimer(s.opts.TooLargeRVTimeout)
			defer t.Stop()
			timeout = t.C()
		}
		select {
		case <-advanced:
		case <-timeout:
			return errTooLargeRV(rv, cur)
		case <-ctx.Done():
			return apierrors.NewTimeoutError(fmt.Sprintf("request canceled: %v", ctx.Err()), 0)
		}
	}
}

// listLocked builds the page described by plan.
func (s *Server) listLocked(r *resourceState, pred predicate, plan listPlan) (runtime.Object, error) {
	objects, listRV := r.objects, s.rv
	if plan.exact {
		if plan.rv < s.compacted {
			if plan.fromContinue {
				return nil, errContinueExpired(encodeContinue(strings.TrimPrefix(plan.start, nsPrefix(pred.namespace)), -1))
			}
			return nil, apierrors.NewResourceExpired(msgListExpired)
		}
		objects, listRV = s.stateAtLocked(r, plan.rv), plan.rv
	}
	keys := make([]string, 0, len(objects))
	for k := range objects {
		if k >= plan.start && (pred.namespace == "" || inNamespace(k, pred.namespace)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var items []runtime.Object
	var last string
	hasMore := false
	for i, k := range keys {
		if obj := objects[k]; pred.matches(obj) {
			items = append(items, obj.DeepCopyObject())
			last = k
		}
		if plan.limit > 0 && int64(len(items)) >= plan.limit {
			hasMore = i < len(keys)-1
			break
		}
	}
	list, err := r.newList(items)
	if err != nil {
		return nil, err
	}
	lm, _ := meta.ListAccessor(list)
	lm.SetResourceVersion(formatRV(listRV))
	if pred.echo {
		setShardInfo(list, pred.shard.String())
	}
	if hasMore {
		lm.SetContinue(encodeContinue(strings.TrimPrefix(last, nsPrefix(pred.namespace))+"\x00", int64(listRV)))
		if pred.empty() {
			remaining := int64(len(keys)) - plan.limit
			lm.SetRemainingItemCount(&remaining)
		}
	}
	return list, nil
}

// stateAtLocked reconstructs r's objects as of rv (compacted <= rv <= s.rv)
// by undoing the later events.
func (s *Server) stateAtLocked(r *resourceState, rv uint64) map[string]runtime.Object {
	state := make(map[string]runtime.Object, len(r.objects))
	for k, v := range r.objects {
		state[k] = v
	}
	for i := len(s.history) - 1; i >= 0 && s.history[i].rv > rv; i-- {
		ev := s.history[i]
		if ev.res != r {
			continue
		}
		if ev.prev == nil {
			delete(state, ev.key)
		} else {
			state[ev.key] = ev.prev
		}
	}
	return state
}

// nsPrefix is the part of a key that continue tokens leave out: like
// kube-apiserver, which encodes keys relative to the request's prefix, a
// namespaced list's token holds only the name.
func nsPrefix(namespace string) string {
	if namespace == "" {
		return ""
	}
	return namespace + "/"
}

func inNamespace(k, namespace string) bool {
	return len(k) > len(namespace) && k[:len(namespace)] == namespace && k[len(namespace)] == '/'
}

// validateOptions applies kube-apiserver's ListOptions validation; a
// violation is a 422 Invalid on kind ListOptions.
func validateOptions(opts metav1.ListOptions, isWatch bool) error {
	in := internalversion.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Continue:             opts.Continue,
		Limit:                opts.Limit,
		SendInitialEvents:    opts.SendInitialEvents,
		Watch:                isWatch,
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
	}
	if errs := validation.ValidateListOptions(&in, true); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return nil
}

// setShardInfo says in list's metadata which shard selector was applied, in
// the server's rendering (sharding.Selector.String).
func setShardInfo(list runtime.Object, selector string) {
	switch l := list.(type) {
	case metav1.ShardedListInterface:
		l.SetShardInfo(&metav1.ShardInfo{Selector: selector})
	case *unstructured.UnstructuredList:
		_ = unstructured.SetNestedField(l.Object, selector, "metadata", "shardInfo", "selector")
	}
}
