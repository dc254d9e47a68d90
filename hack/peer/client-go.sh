#!/usr/bin/env bash
# client-go.sh MODE WORKDIR TOOL: ports client-go's own tests of the pieces
# listwatch replaces onto the drop-ins and runs them: tools/cache's
# shared-informer tests, util/workqueue's queue tests and tools/watch's
# RetryWatcher tests. Called by hack/peer/run.sh, which summarises
# WORKDIR/client-go/gotest.json.
#
# The test files come from the Go module cache (nothing of client-go is
# committed) and are rewritten by TOOL (hack/peer/tool port) into a temporary
# module that replaces github.com/listwatch/listwatch with this checkout:
# each file moves out of client-go's package (which it then dot-imports),
# every constructor call becomes a call of a peerXxx shim, and what needs
# client-go's internals is dropped (hack/peer/skipped.txt says what and why).
# The shims, generated below, are the only difference between the modes:
# MODE=listwatch calls listwatch's drop-ins, MODE=baseline calls client-go's
# own constructors through the same shims, which proves the harness.
set -euo pipefail

mode=$1
work=$2
tool=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The listwatch module under test: run.sh's snapshot of the checkout.
lw=${PEER_LISTWATCH_DIR:-$root}
here=$root/hack/peer
GO=${GO:-go}
CG_VERSION=${PEER_CG_VERSION:-v0.37.2}
case $mode in listwatch | baseline) ;; *) echo "client-go.sh: unknown mode $mode" >&2; exit 2 ;; esac

cg=$(cd "$root" && GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/client-go@$CG_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $cg ]] || { echo "client-go.sh: go mod download gave no directory" >&2; exit 2; }

dir=$work/client-go
rm -rf "$dir"
mkdir -p "$dir/src"
cd "$dir/src"
# listwatch's own go.mod pins the client-go release under test.
cp "$root/go.mod" "$root/go.sum" .
"$GO" mod edit -module=peer.local/clientgo -require=github.com/listwatch/listwatch@v0.0.0 \
	-replace=github.com/listwatch/listwatch="$lw"

port() { # port <pkg dir> <package name> <client-go file> [tool flags]
	local pkg=$1 name=$2 file=$3
	shift 3
	mkdir -p "$pkg"
	"$tool" port -o "$pkg/$(basename "$file")" -pkg "$name" "$@" "$cg/$file"
}

# --- tools/cache: shared informer -------------------------------------------
ci=k8s.io/client-go/tools/cache
port sharedinformer sharedinformer tools/cache/shared_informer_test.go -dot $ci \
	-rename NewSharedInformer=peerNewSharedInformer \
	-assert sharedIndexInformer=SharedIndexInformer \
	-drop eventHandlerCount,isStarted,isRegistered,TestListenerResyncPeriods,TestListenerResyncPeriodsDelayed,testListenerResyncPeriods,TestResyncCheckPeriod \
	-unassign informer.clock,informer.processor.clock
port sharedinformer sharedinformer tools/cache/util_test.go
port sharedinformer sharedinformer tools/cache/main_test.go
cp "$here/client-go/_introspect_test.go" sharedinformer/introspect_test.go

# --- util/workqueue ----------------------------------------------------------
wq=k8s.io/client-go/util/workqueue
port workqueue workqueue util/workqueue/queue_test.go \
	-rename workqueue.New=peerNew,workqueue.NewWithConfig=peerNewWithConfig,workqueue.NewTypedWithConfig=peerNewTypedWithConfig
# TestBasic's and TestAddWhileProcessing's tables hold client-go's concrete *workqueue.Type: hold the interface.
[[ $(grep -c '\*workqueue\.Type$' workqueue/queue_test.go) == 2 ]] || { echo "client-go.sh: queue_test.go: expected two *workqueue.Type fields" >&2; exit 2; }
sed -i 's/\*workqueue\.Type$/workqueue.Interface/' workqueue/queue_test.go
port workqueue workqueue util/workqueue/delaying_queue_test.go -dot $wq \
	-rename NewDelayingQueueWithConfig=peerNewDelayingQueueWithConfig,NewTypedDelayingQueueWithConfig=peerNewTypedDelayingQueueWithConfig \
	-drop waitForWaitingQueueToFill
port workqueue workqueue util/workqueue/default_rate_limiters_test.go -dot $wq \
	-rename NewItemExponentialFailureRateLimiter=peerNewItemExponentialFailureRateLimiter,NewItemFastSlowRateLimiter=peerNewItemFastSlowRateLimiter,NewMaxOfRateLimiter=peerNewMaxOfRateLimiter,NewWithMaxWaitRateLimiter=peerNewWithMaxWaitRateLimiter
cp "$here/client-go/_workqueue_helpers_test.go" workqueue/helpers_test.go

# --- tools/watch: RetryWatcher -------------------------------------------------
port watch watch tools/watch/retrywatcher_test.go \
	-rename NewRetryWatcher=peerNewRetryWatcher,newRetryWatcher=peerNewRetryWatcherDelay
port watch watch tools/watch/until_test.go -dot k8s.io/client-go/tools/watch -rename UntilWithSync=peerUntilWithSync \
	-drop TestUntil,TestUntilMultipleConditions,TestUntilMultipleConditionsFail,TestUntilTimeout,TestUntilErrorCondition

# A constructor call the renames missed would test client-go in both modes.
left=$(grep -nE '(^|[^A-Za-z])(NewSharedInformer|NewSharedIndexInformer|NewSharedIndexInformerWithOptions|NewRetryWatcher|newRetryWatcher|NewRetryWatcherWithContext|UntilWithSync|New(Typed)?DelayingQueue(WithConfig)?|New(Typed)?RateLimitingQueue(WithConfig)?|NewItemExponentialFailureRateLimiter|NewItemFastSlowRateLimiter|NewMaxOfRateLimiter|NewWithMaxWaitRateLimiter)(\[[^]]*\])?\(|workqueue\.New(Typed)?(WithConfig)?(\[[^]]*\])?\(' \
	$(ls sharedinformer/*.go workqueue/*.go watch/*.go | grep -v /zz_peer_shim_test.go) | grep -v '^[^:]*:[0-9]*:[[:space:]]*//' || true)
if [[ -n $left ]]; then
	printf 'client-go.sh: constructor calls left unported:\n%s\n' "$left" >&2
	exit 2
fi

# --- the shims: the only difference between the modes ------------------------
if [[ $mode == listwatch ]]; then
	inf='lwinformer.' wqp='lwworkqueue.' rw='lwwatch.'
else
	inf='cache.' wqp='cgworkqueue.' rw='cgwatch.'
fi
header="// Code generated by hack/peer/client-go.sh ($mode); DO NOT EDIT."
cat >sharedinformer/zz_peer_shim_test.go <<EOF
$header

package sharedinformer

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	lwinformer "github.com/listwatch/listwatch/clientgo/tools/cache"
)

var _ = lwinformer.NewSharedIndexInformer

func peerNewSharedIndexInformer(lw cache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
	return ${inf}NewSharedIndexInformer(lw, obj, resync, indexers)
}

func peerNewSharedIndexInformerWithOptions(lw cache.ListerWatcher, obj runtime.Object, opts cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	return ${inf}NewSharedIndexInformerWithOptions(lw, obj, opts)
}

// peerNewSharedInformer is client-go's NewSharedInformer: a shared index
// informer without indexers.
func peerNewSharedInformer(lw cache.ListerWatcher, obj runtime.Object, resync time.Duration) cache.SharedIndexInformer {
	return peerNewSharedIndexInformer(lw, obj, resync, cache.Indexers{})
}
EOF
cat >workqueue/zz_peer_shim_test.go <<EOF
$header

package workqueue

import (
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	lwworkqueue "github.com/listwatch/listwatch/clientgo/util/workqueue"
	lwrl "github.com/listwatch/listwatch/workqueue"
)

var (
	_ = lwworkqueue.NewTyped[any]
	_ = lwrl.NewItemExponentialRateLimiter[any]
	_ time.Duration
)

// client-go's untyped constructors are its typed ones at T = any.

func peerNew() cgworkqueue.TypedInterface[any] { return ${wqp}NewTyped[any]() }

func peerNewWithConfig(c cgworkqueue.QueueConfig) cgworkqueue.TypedInterface[any] {
	return ${wqp}NewTypedWithConfig[any](c)
}

func peerNewTypedWithConfig[T comparable](c cgworkqueue.TypedQueueConfig[T]) cgworkqueue.TypedInterface[T] {
	return ${wqp}NewTypedWithConfig[T](c)
}

func peerNewDelayingQueueWithConfig(c cgworkqueue.DelayingQueueConfig) cgworkqueue.TypedDelayingInterface[any] {
	return ${wqp}NewTypedDelayingQueueWithConfig[any](c)
}

func peerNewTypedDelayingQueueWithConfig[T comparable](c cgworkqueue.TypedDelayingQueueConfig[T]) cgworkqueue.TypedDelayingInterface[T] {
	return ${wqp}NewTypedDelayingQueueWithConfig[T](c)
}

// The rate limiters: client-go's untyped constructors; listwatch's generic
// limiters (named without "Failure") at T = any in the listwatch mode.
EOF
if [[ $mode == listwatch ]]; then
	cat >>workqueue/zz_peer_shim_test.go <<'EOF'

func peerNewItemExponentialFailureRateLimiter(base, max time.Duration) cgworkqueue.RateLimiter {
	return lwrl.NewItemExponentialRateLimiter[any](base, max)
}

func peerNewItemFastSlowRateLimiter(fast, slow time.Duration, maxFast int) cgworkqueue.RateLimiter {
	return lwrl.NewItemFastSlowRateLimiter[any](fast, slow, maxFast)
}

func peerNewMaxOfRateLimiter(limiters ...cgworkqueue.RateLimiter) cgworkqueue.RateLimiter {
	ls := make([]lwrl.RateLimiter[any], len(limiters))
	for i, l := range limiters {
		ls[i] = l
	}
	return lwrl.NewMaxOfRateLimiter[any](ls...)
}

func peerNewWithMaxWaitRateLimiter(l cgworkqueue.RateLimiter, max time.Duration) cgworkqueue.RateLimiter {
	return lwrl.NewWithMaxWaitRateLimiter[any](l, max)
}
EOF
else
	cat >>workqueue/zz_peer_shim_test.go <<'EOF'

func peerNewItemExponentialFailureRateLimiter(base, max time.Duration) cgworkqueue.RateLimiter {
	return cgworkqueue.NewItemExponentialFailureRateLimiter(base, max)
}

func peerNewItemFastSlowRateLimiter(fast, slow time.Duration, maxFast int) cgworkqueue.RateLimiter {
	return cgworkqueue.NewItemFastSlowRateLimiter(fast, slow, maxFast)
}

func peerNewMaxOfRateLimiter(limiters ...cgworkqueue.RateLimiter) cgworkqueue.RateLimiter {
	ls := make([]cgworkqueue.TypedRateLimiter[any], len(limiters))
	for i, l := range limiters {
		ls[i] = l
	}
	return cgworkqueue.NewMaxOfRateLimiter(ls...)
}

func peerNewWithMaxWaitRateLimiter(l cgworkqueue.RateLimiter, max time.Duration) cgworkqueue.RateLimiter {
	return cgworkqueue.NewWithMaxWaitRateLimiter(l, max)
}
EOF
fi
cat >watch/zz_peer_shim_test.go <<EOF
$header

package watch

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	cgwatch "k8s.io/client-go/tools/watch"

	lwwatch "github.com/listwatch/listwatch/clientgo/tools/watch"
)

var (
	_ = cgwatch.NewRetryWatcherWithContext
	_ = lwwatch.NewRetryWatcherWithContext
)

// resourceVersionGetter is tools/watch's unexported interface of the same
// name, which the tests assert events to.
type resourceVersionGetter interface {
	GetResourceVersion() string
}

type peerRetryWatcher interface {
	watch.Interface
	Done() <-chan struct{}
}

var peerUntilWithSync = ${rw}UntilWithSync

// toListWatcherWithUnSupportedWatchListSemantics is the helper of the same
// name in tools/watch's informerwatcher_test.go (not ported).
func toListWatcherWithUnSupportedWatchListSemantics(lw *cache.ListWatch) cache.ListerWatcher {
	return unsupportedWatchListLW{lw}
}

type unsupportedWatchListLW struct{ *cache.ListWatch }

func (unsupportedWatchListLW) IsWatchListSemanticsUnSupported() bool { return true }

// peerNewRetryWatcher is client-go's deprecated NewRetryWatcher: the
// context-aware constructor with a background context.
func peerNewRetryWatcher(rv string, w cache.Watcher) (peerRetryWatcher, error) {
	return peerNewRetryWatcherDelay(context.Background(), rv, cache.ToWatcherWithContext(w), time.Second)
}

// peerNewRetryWatcherDelay stands for client-go's unexported
// newRetryWatcher(ctx, rv, w, minRestartDelay), which the tests call with a
// zero delay. Neither library exports the delay, so both modes use the
// public constructor and its default pacing.
func peerNewRetryWatcherDelay(ctx context.Context, rv string, w cache.WatcherWithContext, _ time.Duration) (peerRetryWatcher, error) {
	r, err := ${rw}NewRetryWatcherWithContext(ctx, rv, w)
	if err != nil {
		return nil, err // not a typed nil
	}
	return r, nil
}
EOF

GOFLAGS=-mod=mod "$GO" mod tidy >&2

set +e
"$GO" test -json -count=1 -p 1 ${PEER_RACE--race} -timeout "${PEER_TIMEOUT:-5m}" ${PEER_SKIP:+-skip "$PEER_SKIP"} ./... >"$dir/gotest.json" 2>"$dir/gotest.stderr"
status=$?
set -e
echo "$status" >"$dir/exit"
