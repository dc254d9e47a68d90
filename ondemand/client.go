package ondemand

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/internal/listobj"
	"github.com/listwatch/listwatch/store"
)

// Client is what [FromClient] needs of a typed client-go client, e.g.
// clientset.CoreV1().Secrets(namespace).
type Client[T store.Object, L runtime.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
}

// PageSize is the page size of [FromClient]'s lists.
const PageSize = 500

// FromClient builds a Fetcher from typed clients, one per namespace
// ("" for all namespaces, or for a cluster-scoped resource):
//
//	ondemand.FromClient(func(ns string) ondemand.Client[*corev1.Secret, *corev1.SecretList] {
//		return clientset.CoreV1().Secrets(ns)
//	})
//
// Its gets are quorum reads (no resource version); its lists are quorum
// reads of PageSize objects a page, and a list whose continue token
// expires midway starts again in one page.
func FromClient[T store.Object, L runtime.Object](client func(namespace string) Client[T, L]) Fetcher[T] {
	return clientFetcher[T, L]{client: client}
}

type clientFetcher[T store.Object, L runtime.Object] struct {
	client func(namespace string) Client[T, L]
}

func (f clientFetcher[T, L]) Get(ctx context.Context, namespace, name string) (T, error) {
	return f.client(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (f clientFetcher[T, L]) List(ctx context.Context, namespace string, opts metav1.ListOptions) ([]T, error) {
	c := f.client(namespace)
	opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	opts.Limit = PageSize
	var out []T
	for restarted := false; ; {
		list, err := c.List(ctx, opts)
		if err != nil && apierrors.IsResourceExpired(err) && opts.Continue != "" && !restarted {
			restarted, out = true, out[:0]
			opts.Continue, opts.Limit = "", 0
			continue
		}
		if err != nil {
			return nil, err
		}
		items, _, err := listobj.Items(list)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			obj, ok := it.(T)
			if !ok {
				return nil, fmt.Errorf("ondemand: the list holds a %T, not a %T", it, obj)
			}
			out = append(out, obj)
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return nil, err
		}
		if lm.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = lm.GetContinue()
	}
}
