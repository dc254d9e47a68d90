package retrywatcher

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/internal/nilcheck"
	"github.com/listwatch/listwatch/internal/resourceversion"
)

// DropMalformed marks a bookmark whose resource version is malformed (see
// parseRV). It is reported and not adopted: the next watch resumes from the
// last valid resource version.
const DropMalformed DropReason = "malformed-resource-version"

// rvRule says, for error messages, what a well-formed resource version is.
const rvRule = "want a positive decimal integer, as kube-apiserver issues"

// parseRV parses a resource version as kube-apiserver issues them: a
// positive decimal integer. Anything else (empty, "0", signed, non-numeric)
// is malformed: the server would refuse a watch from it, and it cannot be
// ordered against the versions already delivered.
func parseRV(rv string) (uint64, bool) {
	n, ok := resourceversion.Parse(rv)
	return n, ok && n > 0
}

// resourceVersionOf returns the resource version of an event's object. Like
// client-go's RetryWatcher it needs only a GetResourceVersion method, not
// full object metadata.
func resourceVersionOf(obj runtime.Object) (string, bool) {
	o, ok := obj.(interface{ GetResourceVersion() string })
	if !ok || nilcheck.Is(obj) {
		return "", false
	}
	return o.GetResourceVersion(), true
}
