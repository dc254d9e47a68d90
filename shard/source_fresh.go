package shard

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/informer"
)

var _ informer.CurrentResourceVersioner = (*Source)(nil)

// CurrentResourceVersion implements informer.CurrentResourceVersioner, so
// that informer.Fresh and WaitForResourceVersion's check work on a sharded
// informer: it lists at most one object of the inner source from a quorum
// read (Limit 1, ResourceVersion ""), with no shard selector, and returns
// the list's resource version. It does not go through ListWithContext,
// whose first page starts a list cycle, and it does not wait for the
// member's first assignment: the collection's resource version is the same
// whatever part of it the member holds.
func (s *Source) CurrentResourceVersion(ctx context.Context) (string, error) {
	list, err := s.inner.ListWithContext(ctx, metav1.ListOptions{Limit: 1, ResourceVersion: ""})
	if err != nil {
		return "", err
	}
	if list == nil {
		return "", fmt.Errorf("shard source %s: the server answered no list", s.name)
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return "", fmt.Errorf("shard source %s: the server's answer %T is not a list: %w", s.name, list, err)
	}
	return acc.GetResourceVersion(), nil
}
