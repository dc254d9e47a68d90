package fake

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultHistorySize       = 10000
	DefaultWatchBufferSize   = 100
	DefaultBookmarkInterval  = time.Minute
	DefaultTooLargeRVTimeout = 3 * time.Second
)

// Options configures a Server. The zero value is usable: it serves pods and
// configmaps (typed), with client-go's scheme and the real clock.
type Options struct {
	// Resources are the resource types the server serves. Each GVR and each
	// Kind may appear once. Nil means Pods() and ConfigMaps().
	Resources []Resource
	// Scheme builds typed list objects (Kind+"List") and resolves the kind of
	// typed objects passed to Create/Update/Delete. Nil means client-go's
	// scheme.Scheme.
	Scheme *runtime.Scheme
	// Clock drives bookmarks, watch timeouts, event delays, scheduled watch
	// closes and the "too large resource version" wait. Nil means the real
	// clock, which testing/synctest bubbles virtualise.
	Clock clock.Clock
	// HistorySize is how many events (across all resources) the server keeps.
	// Older events are compacted away: a watch, an exact list or a continue
	// token from before the window gets 410 Expired. Zero means
	// DefaultHistorySize; negative is an error.
	HistorySize int
	// WatchBufferSize bounds the events queued for one watch beyond the ones
	// it was opened with. A watch whose client falls further behind is closed
	// by the server (as kube-apiserver does with a slow watcher); the client
	// re-watches from its last resource version. Zero means
	// DefaultWatchBufferSize; negative is an error.
	WatchBufferSize int
	// BookmarkInterval is how often a watch that allowed bookmarks gets one.
	// Zero means DefaultBookmarkInterval (kube-apiserver's one minute).
	BookmarkInterval time.Duration
	// TooLargeRVTimeout is how long a list or a streaming watch waits for the
	// server to reach a future resource version before failing with 504
	// "Too large resource version". Zero means DefaultTooLargeRVTimeout (3s,
	// as kube-apiserver's watch cache).
	TooLargeRVTimeout time.Duration
	// InitialResourceVersion is the resource version of the empty server;
	// the first write gets InitialResourceVersion+1. Zero is fine.
	InitialResourceVersion uint64
	// WatchCache says how watches from an old resource version are served;
	// the zero value keeps the fake's historical behaviour.
	WatchCache WatchCacheMode
	// RequireNamespaces makes Create of a namespaced object fail with 404
	// NotFound `namespaces "X" not found` unless CreateNamespace(X) was
	// called first, as kube-apiserver's namespace lifecycle admission does.
	// False (the default) accepts any namespace.
	RequireNamespaces bool
	// FieldManager, when set, makes Create and Update record a
	// metadata.managedFields entry for it (operation Update, fieldsType
	// FieldsV1, the resource's apiVersion) on objects that set any field,
	// as kube-apiserver does for the writing client. The field set is a
	// plausible approximation of server-side apply's (see managed.go), not
	// an exact one. Empty (the default) stores no managedFields.
	FieldManager string
	// UIDSeed, when non-zero, makes the UIDs of created objects random
	// version-4 UUIDs, as kube-apiserver's are, drawn from a generator
	// seeded with it (the same seed and writes give the same UIDs). Zero
	// (the default) numbers them, 00000000-0000-0000-0000-000000000001 and
	// on, which hash (FNV-1a, shard selectors on metadata.uid) into a few
	// neighbouring slices only.
	UIDSeed uint64
	// ShardSelectors says what the server does with a request's KEP-5866
	// shard selector (metav1.ListOptions.ShardSelector); the zero value is
	// a server without the ShardedListAndWatch gate, which ignores it.
	ShardSelectors ShardSelectorMode
}

// ShardSelectorMode models kube-apiserver's ShardedListAndWatch feature
// gate for shard selectors (KEP-5866).
type ShardSelectorMode int

const (
	// ShardSelectorsIgnored (the default) is a server without the gate:
	// the selector is not even parsed, lists and watches carry every
	// object, and lists no ListMeta.ShardInfo.
	ShardSelectorsIgnored ShardSelectorMode = iota
	// ShardSelectorsApplied is a server with the gate on: lists, watches
	// and streaming lists carry only the objects whose hashed field falls
	// in one of the selector's ranges (apimachinery's sharding.Selector),
	// and a list (not a streaming one) echoes the selector it applied in
	// ListMeta.ShardInfo, rendered as the server renders it. A selector
	// the server's parser refuses is a 500 "invalid shard selector: ...".
	// As on the server, a shard-selected page without label or field
	// selectors still reports remainingItemCount for the whole resource.
	ShardSelectorsApplied
	// ShardSelectorsUnechoed filters as ShardSelectorsApplied does but
	// leaves ShardInfo out: a server whose lists a client cannot tell
	// from unfiltered ones (a test of a client's fallback).
	ShardSelectorsUnechoed
)

// WatchCacheMode models kube-apiserver's watch cache for watches that start
// from an old resource version.
type WatchCacheMode int

const (
	// WatchCacheFollowsCompaction (the default) serves watches from one
	// history window that Server.Compact shortens: a watch from a compacted
	// RV gets the watch cache's in-stream 410 "too old resource version: N
	// (M)". Simple, and what tests that force a relist with Compact expect.
	WatchCacheFollowsCompaction WatchCacheMode = iota
	// WatchCacheOwnWindow is kube-apiserver with its watch cache: the cache
	// keeps its own window of events (Options.HistorySize, across all
	// resources), which etcd compaction does not shorten. After Compact,
	// exact lists and continue tokens at an older RV get 410, but a watch
	// from such an RV still replays the events after it while they are in
	// the window.
	WatchCacheOwnWindow
	// WatchCacheDisabled is kube-apiserver with --watch-cache=false:
	// watches are served by etcd, and one from a compacted RV gets a single
	// in-stream 410 ERROR "The resourceVersion for the provided watch is too
	// old." Lists are unchanged (RV "0" still ignores limit).
	WatchCacheDisabled
)

// Resource describes one served resource type.
type Resource struct {
	// GVR names the resource, e.g. {Version: "v1", Resource: "pods"}.
	GVR schema.GroupVersionResource
	// Kind is the object kind, e.g. "Pod". The list kind is Kind+"List".
	Kind string
	// Namespaced says whether objects live in namespaces.
	Namespaced bool
	// Unstructured says objects are *unstructured.Unstructured and lists are
	// *unstructured.UnstructuredList. Otherwise objects are the typed Go
	// struct registered in the scheme for Kind.
	Unstructured bool
	// FieldGetter returns extra selectable fields of an object, beyond
	// metadata.name and metadata.namespace (which are always supported).
	// The supported labels are the keys it returns for an empty object; a
	// field selector on any other field is a 400 Bad Request ("field label
	// not supported"), as from kube-apiserver.
	FieldGetter func(obj runtime.Object) fields.Set
	// StatusSubresource says an unstructured resource has the status
	// subresource, as a CRD that enables it: over fake/fakeapi, writes to
	// the object keep its status and writes to /status change only that.
	// A typed resource has it when its Go type has a Status field. The
	// Server's own methods write whole objects either way.
	StatusSubresource bool
	// ValidateName checks object names on create and update, as the
	// resource's registry strategy does; violations are 422 Invalid on
	// metadata.name. Nil means a DNS-1123 subdomain
	// (apivalidation.NameIsDNSSubdomain), the rule of most resources
	// (pods, configmaps, secrets, deployments); namespaces and services use
	// apivalidation.NameIsDNSLabel.
	ValidateName apivalidation.ValidateNameFunc
}

// Pods is the typed core/v1 pods resource, with the pod fields kube-apiserver
// supports in field selectors (spec.nodeName, status.phase, ...).
func Pods() Resource {
	return Resource{
		GVR:         corev1.SchemeGroupVersion.WithResource("pods"),
		Kind:        "Pod",
		Namespaced:  true,
		FieldGetter: podFields,
	}
}

// ConfigMaps is the typed core/v1 configmaps resource.
func ConfigMaps() Resource {
	return Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Kind: "ConfigMap", Namespaced: true}
}

func podFields(obj runtime.Object) fields.Set {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             pod.Status.PodIP,
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
}

// LWOptions selects what a ListerWatcher lists and watches.
type LWOptions struct {
	// Resource is the served resource; an unknown one gets 404 on every call.
	Resource schema.GroupVersionResource
	// Namespace restricts calls to one namespace; "" means all namespaces.
	Namespace string
	// LabelSelector and FieldSelector, when set, are ANDed into every call's
	// own selectors, like a filtered informer's tweakListOptions.
	LabelSelector, FieldSelector string
}

// apply merges o's fixed selectors into opts.
func (o LWOptions) apply(opts metav1.ListOptions) metav1.ListOptions {
	opts.LabelSelector = joinSelectors(o.LabelSelector, opts.LabelSelector)
	opts.FieldSelector = joinSelectors(o.FieldSelector, opts.FieldSelector)
	return opts
}

func joinSelectors(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "," + b
}

// withDefaults validates o and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Resources == nil {
		o.Resources = []Resource{Pods(), ConfigMaps()}
	}
	if o.Scheme == nil {
		o.Scheme = scheme.Scheme
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.WatchCache < WatchCacheFollowsCompaction || o.WatchCache > WatchCacheDisabled {
		return o, fmt.Errorf("fake: unknown WatchCache mode %d", o.WatchCache)
	}
	if o.ShardSelectors < ShardSelectorsIgnored || o.ShardSelectors > ShardSelectorsUnechoed {
		return o, fmt.Errorf("fake: unknown ShardSelectors mode %d", o.ShardSelectors)
	}
	if o.HistorySize < 0 || o.WatchBufferSize < 0 || o.BookmarkInterval < 0 || o.TooLargeRVTimeout < 0 {
		return o, fmt.Errorf("fake: negative HistorySize, WatchBufferSize, BookmarkInterval or TooLargeRVTimeout")
	}
	if o.HistorySize == 0 {
		o.HistorySize = DefaultHistorySize
	}
	if o.WatchBufferSize == 0 {
		o.WatchBufferSize = DefaultWatchBufferSize
	}
	if o.BookmarkInterval == 0 {
		o.BookmarkInterval = DefaultBookmarkInterval
	}
	if o.TooLargeRVTimeout == 0 {
		o.TooLargeRVTimeout = DefaultTooLargeRVTimeout
	}
	return o, nil
}
