package store

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// refStore is the naive reference: a plain map, linear scans for every
// index query, and the replace-session rules spelled out directly.
type refStore struct {
	items    map[string]*corev1.Pod
	indexers map[string]func(*corev1.Pod) []string
	rv       string
	// inSession is true while a replace session is open; written holds
	// the keys written since it began.
	inSession bool
	written   map[string]bool
}

func newRefStore() *refStore {
	return &refStore{
		items: map[string]*corev1.Pod{},
		indexers: map[string]func(*corev1.Pod) []string{
			NamespaceIndex: func(p *corev1.Pod) []string { return []string{p.Namespace} },
		},
	}
}

func refKey(p *corev1.Pod) string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

func (r *refStore) upsert(p *corev1.Pod) {
	r.items[refKey(p)] = p
	r.rv = p.ResourceVersion
	if r.inSession {
		r.written[refKey(p)] = true
	}
}

func (r *refStore) sessionUpsert(p *corev1.Pod) {
	r.items[refKey(p)] = p
	r.written[refKey(p)] = true
}

func (r *refStore) delete(p *corev1.Pod) {
	delete(r.items, refKey(p))
	r.rv = p.ResourceVersion
}

func (r *refStore) replace(list []*corev1.Pod, rv string) {
	r.items = map[string]*corev1.Pod{}
	for _, p := range list {
		r.items[refKey(p)] = p
	}
	r.rv = rv
	r.inSession = false
}

// commit returns the keys it deleted, sorted.
func (r *refStore) commit(rv string) []string {
	var gone []string
	for k := range r.items {
		if !r.written[k] {
			gone = append(gone, k)
			delete(r.items, k)
		}
	}
	slices.Sort(gone)
	r.rv = rv
	r.inSession = false
	return gone
}

func (r *refStore) keys() []string {
	keys := make([]string, 0, len(r.items))
	for k := range r.items {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// byIndex returns the sorted keys of the objects filed under value.
func (r *refStore) byIndex(name, value string) []string {
	var keys []string
	for k, p := range r.items {
		if slices.Contains(r.indexers[name](p), value) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// indexValues returns the sorted distinct values of index name.
func (r *refStore) indexValues(name string) []string {
	var vals []string
	for _, p := range r.items {
		for _, v := range r.indexers[name](p) {
			if !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
	}
	slices.Sort(vals)
	return vals
}

// matching returns the sorted keys sharing any value of index name with p.
func (r *refStore) matching(name string, p *corev1.Pod) []string {
	want := r.indexers[name](p)
	var keys []string
	for k, q := range r.items {
		for _, v := range r.indexers[name](q) {
			if slices.Contains(want, v) {
				keys = append(keys, k)
				break
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// namespaceList returns the sorted keys in ns ("" = all) matching sel.
func (r *refStore) namespaceList(ns string, sel labels.Selector) []string {
	var keys []string
	for k, p := range r.items {
		if (ns == "" || p.Namespace == ns) && sel.Matches(labels.Set(p.Labels)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
