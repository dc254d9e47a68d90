package fake

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages kube-apiserver uses for 410 responses. Lists and continue tokens
// are answered by etcd's messages, watches by the watch cache's (or by
// etcd's msgWatchExpired without a watch cache).
const (
	msgListExpired     = "The resourceVersion for the provided list is too old."
	msgWatchExpired    = "The resourceVersion for the provided watch is too old."
	msgContinueExpired = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response " +
		"to retrieve the remainder of the results. Continuing with the provided token results in an " +
		"inconsistent list - objects that were created, modified, or deleted between the time the first " +
		"chunk was returned and now may show up in the list."
)

// errWatchExpired is the 410 for a watch from an RV before the window. The
// watch cache says "too old resource version: <requested> (<oldest>)"; etcd
// (Options.WatchCache WatchCacheDisabled) says msgWatchExpired. Called with
// mu held.
func (s *Server) errWatchExpired(requested uint64) error {
	if s.opts.WatchCache == WatchCacheDisabled {
		return apierrors.NewResourceExpired(msgWatchExpired)
	}
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", requested, s.windowStart))
}

// errContinueExpired is etcd's 410 for a compacted continue token; it carries
// a token that continues the list, inconsistently, at the latest RV.
func errContinueExpired(inconsistentToken string) error {
	err := apierrors.NewResourceExpired(msgContinueExpired)
	err.ErrStatus.ListMeta.Continue = inconsistentToken
	return err
}

// errTooLargeRV is the 504 a request for a future resource version gets.
func errTooLargeRV(requested, current uint64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// errNoResource is the 404 for a resource type the server does not serve.
func errNoResource(gvr schema.GroupVersionResource) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{Group: gvr.Group, Kind: gvr.Resource},
	}}
}

// errConflict is the 409 for a stale resourceVersion on an update.
func errConflict(r *resourceState, name, detail string) error {
	return apierrors.NewConflict(r.groupResource(), name, errors.New(detail))
}

// errDeletePrecondition is the 409 for a failed delete precondition. The
// apiserver's delete strategy reports it on the kind, not the resource
// ("Operation cannot be fulfilled on ConfigMap ..."), with details kind
// ConfigMap.
func errDeletePrecondition(r *resourceState, name, detail string) error {
	return apierrors.NewConflict(schema.GroupResource{Group: r.gvk.Group, Resource: r.gvk.Kind}, name, errors.New(detail))
}

// errUpdateUID is the 409 for an update whose UID does not match the stored
// object's: kube-apiserver's storage precondition fails with an etcd
// StorageError, whose text names the etcd key.
func errUpdateUID(r *resourceState, namespace, name string, want, have types.UID) error {
	return errConflict(r, name, fmt.Sprintf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: "+
			"Precondition failed: UID in precondition: %s, UID in object meta: %s",
		r.etcdKey(namespace, name), want, have))
}

// errCreateWithRV is kube-apiserver's answer to a create that sets
// metadata.resourceVersion: a bare 500 with no reason.
func errCreateWithRV() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Message: "resourceVersion should not be set on objects to be created",
	}}
}

// errNamespaceNotFound is the 404 for a create in a namespace that does not
// exist (Options.RequireNamespaces).
func errNamespaceNotFound(namespace string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, namespace)
}

const msgModified = "the object has been modified; please apply your changes to the latest version and try again"

// invalidf is a 422 Invalid naming one field of one object of r.
func invalidf(r *resourceState, name, path, detail string) error {
	return apierrors.NewInvalid(r.gvk.GroupKind(), name, field.ErrorList{field.Invalid(field.NewPath(path), "", detail)})
}

// errConnRefused is what client-go's REST client returns when nothing
// listens at the server address: a *url.Error around a dial *net.OpError
// around ECONNREFUSED. utilnet.IsConnectionRefused recognises it.
func errConnRefused(verb string, gvr schema.GroupVersionResource, namespace string) error {
	return &url.Error{
		Op:  "Get",
		URL: requestURL(verb, gvr, namespace),
		Err: &net.OpError{
			Op:   "dial",
			Net:  "tcp",
			Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6443},
			Err:  os.NewSyscallError("connect", syscall.ECONNREFUSED),
		},
	}
}

// requestURL is the URL client-go would have requested, for error messages.
func requestURL(verb string, gvr schema.GroupVersionResource, namespace string) string {
	prefix := "https://127.0.0.1:6443/api/" + gvr.Version
	if gvr.Group != "" {
		prefix = "https://127.0.0.1:6443/apis/" + gvr.Group + "/" + gvr.Version
	}
	if namespace != "" {
		prefix += "/namespaces/" + namespace
	}
	u := prefix + "/" + gvr.Resource
	if verb == "watch" {
		u += "?watch=true"
	}
	return u
}
