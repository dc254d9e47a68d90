package fake

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/shardsel"
)

// predicate decides which objects of one resource a request sees.
type predicate struct {
	// res is the resource; namespace "" means all namespaces.
	res       *resourceState
	namespace string
	// label and field are never nil (Everything when unset).
	label labels.Selector
	field fields.Selector
	// shard is the request's shard selector when the server applies them
	// (Options.ShardSelectors), else nil.
	shard sharding.Selector
	// echo: a list says which shard selector it applied (ListMeta.ShardInfo).
	echo bool
}

// newPredicate parses the selectors of opts, answering bad ones with the
// 400 Bad Request kube-apiserver gives; a shard selector counts under the
// ShardSelectors mode (a bad one is the server's 500 without a reason, as
// its registry returns a plain error).
func newPredicate(r *resourceState, namespace string, opts metav1.ListOptions, shards ShardSelectorMode) (predicate, error) {
	p := predicate{res: r, namespace: namespace, label: labels.Everything(), field: fields.Everything()}
	if opts.ShardSelector != "" && shards != ShardSelectorsIgnored {
		reqs, err := shardsel.Parse(opts.ShardSelector)
		if err != nil {
			// The registry's plain error, which the server answers as a
			// 500 with no reason.
			return p, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
				Code: http.StatusInternalServerError, Message: "invalid shard selector: " + err.Error()}}
		}
		p.shard, p.echo = sharding.NewSelector(reqs...), shards == ShardSelectorsApplied
	}
	if opts.LabelSelector != "" {
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return p, apierrors.NewBadRequest(err.Error())
		}
		p.label = sel
	}
	if opts.FieldSelector != "" {
		sel, err := fields.ParseSelector(opts.FieldSelector)
		if err != nil {
			return p, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
		}
		for _, req := range sel.Requirements() {
			if !r.supportsField(req.Field) {
				return p, r.errUnsupportedField(req.Field)
			}
		}
		p.field = sel
	}
	return p, nil
}

func (r *resourceState) supportsField(name string) bool {
	switch name {
	case "metadata.name":
		return true
	case "metadata.namespace":
		return r.cfg.Namespaced
	}
	_, ok := r.fieldLabels[name]
	return ok
}

// errUnsupportedField words the 400 as kube-apiserver does: types with
// their own field label conversion (a FieldGetter here) say "field label not
// supported", the others get the default conversion's message.
func (r *resourceState) errUnsupportedField(name string) error {
	if r.cfg.FieldGetter != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", name))
	}
	known := `only "metadata.name"`
	if r.cfg.Namespaced {
		known += `, "metadata.namespace"`
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: %s", name, known))
}

// matches reports whether obj (nil: no object) is selected.
func (p predicate) matches(obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if p.namespace != "" && m.GetNamespace() != p.namespace {
		return false
	}
	if !p.label.Empty() && !p.label.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	if p.shard != nil {
		if ok, err := p.shard.Matches(obj); err != nil || !ok {
			return false
		}
	}
	return p.field.Empty() || p.field.Matches(p.res.fieldsOf(obj, m))
}

// empty reports whether the predicate selects every object of the resource
// (in its namespace), which is when kube-apiserver reports
// remainingItemCount. Like the server's (SelectionPredicate.Empty), it
// looks at labels and fields only: a shard-selected page still counts
// every remaining object of the resource.
func (p predicate) empty() bool { return p.label.Empty() && p.field.Empty() }

// project turns a committed event into what this predicate's watcher sees,
// as kube-apiserver does: an object that stops matching is a Deleted event
// (the old state with the new RV), one that starts matching is Added. The
// result shares ev's immutable objects; it is copied on delivery.
func (p predicate) project(ev event) (queued, bool) {
	cur := ev.typ != watch.Deleted && p.matches(ev.obj)
	old := p.matches(ev.prev)
	switch {
	case cur && old:
		return queued{typ: watch.Modified, obj: ev.obj}, true
	case cur:
		return queued{typ: watch.Added, obj: ev.obj}, true
	case old:
		return queued{typ: watch.Deleted, obj: ev.prev, rv: ev.rv}, true
	}
	return queued{}, false
}
