package ondemand

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// List returns, whole, the objects of namespace ("" for all) whose labels
// sel matches (nil: all): one for each object the metadata cache holds,
// each at least as new as its metadata, in no particular order. Held
// objects come from memory; when more than one is missing, one list from
// the server (every page, Fetcher.List) brings them, else one Get. An
// object the server no longer has is left out (it was deleted after the
// metadata cache saw it). The objects listed are returned, not held (a
// list of every object would crowd out the few that are read), but a
// held object older than its listed version is replaced. Any error of
// the server's fails the whole call: nothing partial is returned.
func (c *Cache[T]) List(ctx context.Context, namespace string, sel labels.Selector) ([]T, error) {
	if sel == nil {
		sel = labels.Everything()
	}
	metas := c.meta.List(namespace, sel)
	out := make([]T, 0, len(metas))
	var missing []metav1.Object
	now := c.now()
	for _, m := range metas {
		if obj, ok := c.held.get(keyOf(m), m.GetResourceVersion(), now); ok {
			out = append(out, obj)
		} else {
			missing = append(missing, m)
		}
	}
	c.counts.reads.Add(int64(len(metas)))
	c.counts.hits.Add(int64(len(metas) - len(missing)))
	if len(missing) == 1 {
		m := missing[0]
		obj, err := c.Get(ctx, m.GetNamespace(), m.GetName())
		c.counts.reads.Add(-1) // counted above
		if err == nil {
			out = append(out, obj)
		} else if !isNotFound(err) {
			return nil, err
		}
		return out, nil
	}
	if len(missing) == 0 {
		return out, nil
	}
	listed, err := c.opts.Fetcher.List(ctx, namespace, metav1.ListOptions{LabelSelector: sel.String()})
	c.counts.lists.Add(1)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]T, len(listed))
	for _, obj := range listed {
		byKey[keyOf(obj)] = obj
	}
	for _, m := range missing {
		key := keyOf(m)
		obj, ok := byKey[key]
		if !ok {
			continue // deleted since the metadata cache saw it
		}
		if obj, err = c.transform(obj); err != nil {
			return nil, err
		}
		e := newEntry(obj, obj.GetResourceVersion(), 0, false, 0)
		if !e.atLeast(m.GetResourceVersion()) {
			// The list answered an older version than the cached
			// metadata: read this one alone.
			got, err := c.Get(ctx, m.GetNamespace(), m.GetName())
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			obj = got
		} else if old := c.held.peek(key); old != nil {
			c.admit(key, obj)
		}
		out = append(out, obj)
	}
	return out, nil
}
