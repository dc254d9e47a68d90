package fake

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Converged checks that objects (a client store's content: client-go's
// cache.Store.List(), a listwatch store's []T, ...) are exactly the server's
// objects of lw.Resource in lw.Namespace that match lw's selectors: the same
// keys at the same resource versions. It returns nil or an error with a readable diff. An element that
// has no object metadata (say a cache.DeletedFinalStateUnknown) is reported.
func Converged[T any](srv *Server, lw LWOptions, objects []T) error {
	got := make(map[string]string, len(objects))
	var bad []string
	for i, o := range objects {
		m, err := meta.Accessor(o)
		if err != nil {
			bad = append(bad, fmt.Sprintf("item %d (%T) has no object metadata", i, o))
			continue
		}
		got[key(m.GetNamespace(), m.GetName())] = m.GetResourceVersion()
	}
	err := ConvergedKeys(srv, lw, got)
	if len(bad) == 0 {
		return err
	}
	msg := strings.Join(bad, "\n")
	if err != nil {
		msg = err.Error() + "\n" + msg
	}
	return fmt.Errorf("%s", msg)
}

// ConvergedKeys is Converged for a map from key ("namespace/name", or
// "name" for cluster-scoped objects) to resource version.
func ConvergedKeys(srv *Server, lw LWOptions, keysToRV map[string]string) error {
	want, rv, err := srv.snapshotRVs(lw)
	if err != nil {
		return err
	}
	var diff []string
	for k, w := range want {
		switch g, ok := keysToRV[k]; {
		case !ok:
			diff = append(diff, fmt.Sprintf("- %s@%s (missing from store)", k, w))
		case g != w:
			diff = append(diff, fmt.Sprintf("~ %s store@%s server@%s", k, g, w))
		}
	}
	for k, g := range keysToRV {
		if _, ok := want[k]; !ok {
			diff = append(diff, fmt.Sprintf("+ %s@%s (not on server)", k, g))
		}
	}
	if len(diff) == 0 {
		return nil
	}
	sort.Slice(diff, func(i, j int) bool { return diff[i][2:] < diff[j][2:] })
	return fmt.Errorf("fake: store has not converged to %v at RV %s (%d server objects, %d in store):\n%s",
		lw.Resource, rv, len(want), len(keysToRV), strings.Join(diff, "\n"))
}

// snapshotRVs returns key → RV of the server's objects selected by lw, and
// the server's RV.
func (s *Server) snapshotRVs(lw LWOptions) (map[string]string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.resource(lw.Resource)
	if err != nil {
		return nil, "", err
	}
	pred, err := newPredicate(r, lw.Namespace, lw.apply(metav1.ListOptions{}), s.opts.ShardSelectors)
	if err != nil {
		return nil, "", err
	}
	out := make(map[string]string, len(r.objects))
	for k, obj := range r.objects {
		if pred.matches(obj) {
			m, _ := meta.Accessor(obj)
			out[k] = m.GetResourceVersion()
		}
	}
	return out, formatRV(s.rv), nil
}
