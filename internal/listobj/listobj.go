// Package listobj is the one home of reading a list response: its items
// and its resource version, as the RetryWatcher's relist and the drop-in
// UntilWithSync need them.
package listobj

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// Items extracts the items and the resource version of a list object.
func Items(list runtime.Object) ([]runtime.Object, string, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", fmt.Errorf("list returned a %T without list metadata: %w", list, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, "", fmt.Errorf("cannot extract items from %T: %w", list, err)
	}
	return items, lm.GetResourceVersion(), nil
}
