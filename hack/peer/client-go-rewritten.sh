#!/usr/bin/env bash
# client-go-rewritten.sh MODE WORKDIR TOOL: runs client-go's own tests of the
# packages listwatch's clientgo/ tree stands in for (tools/cache,
# tools/watch, util/workqueue, informers, dynamic/dynamicinformer,
# metadata/metadatainformer: go run ./hack/clientgo-reexport -list) against
# those packages, with only their import paths rewritten. Called by
# hack/peer/run.sh, which summarises WORKDIR/client-go-rewritten/gotest.json
# and lists WORKDIR/client-go-rewritten/dropped.txt.
#
# Nothing of client-go is committed: every *_test.go of those packages is
# taken from the module cache (the version go.mod requires) and placed by
# TOOL (hack/peer/tool rewrite) into a copy of the listwatch module: an
# internal test (package cache) becomes part of listwatch's clientgo/tools/
# cache, an external one (package cache_test) imports it, and imports of the
# covered k8s.io/client-go/... packages become github.com/listwatch/
# listwatch/clientgo/.... Declarations that do not type-check there (they
# read client-go's unexported production identifiers) are dropped and
# listed with what they need. MODE=baseline puts the same files, after the
# same drops, back into a copy of client-go's own packages with their
# imports unchanged (go.mod replaces k8s.io/client-go with the copy), which
# proves the harness.
set -euo pipefail

mode=$1
work=$2
tool=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The listwatch module under test: run.sh's snapshot of the checkout.
lw=${PEER_LISTWATCH_DIR:-$root}
GO=${GO:-go}
case $mode in listwatch | baseline) ;; *) echo "client-go-rewritten.sh: unknown mode $mode" >&2; exit 2 ;; esac

version=$(cd "$root" && "$GO" list -m -f '{{.Version}}' k8s.io/client-go)
cg=$(cd "$root" && GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/client-go@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $cg ]] || { echo "client-go-rewritten.sh: go mod download gave no directory" >&2; exit 2; }

dir=$work/client-go-rewritten
rm -rf "$dir"
mkdir -p "$dir"
# A writable copy of the module: the tests are placed into its packages and
# go mod tidy adds their requirements (testify, ...) to its go.mod.
cp -a "$lw" "$dir/listwatch"
(cd "$dir/listwatch" && "$GO" run ./hack/clientgo-reexport -list) >"$dir/targets"

extra=()
if [[ $mode == baseline ]]; then
	cp -a "$cg" "$dir/client-go"
	chmod -R u+w "$dir/client-go"
	extra=(-cgcopy "$dir/client-go")
fi
"$tool" rewrite -mode "$mode" -cg "$cg" -lw "$dir/listwatch" "${extra[@]}" \
	-targets "$dir/targets" -dropped "$dir/dropped.txt" -packages "$dir/packages" >&2
cd "$dir/listwatch"
if [[ $mode == baseline ]]; then
	"$GO" mod edit -replace="k8s.io/client-go=$dir/client-go"
fi

set +e
# shellcheck disable=SC2046 # one import path a line
GOFLAGS=-mod=mod "$GO" test -json -count=1 -p 1 ${PEER_RACE--race} -timeout "${PEER_TIMEOUT:-10m}" \
	${PEER_SKIP:+-skip "$PEER_SKIP"} $(cat "$dir/packages") >"$dir/gotest.json" 2>"$dir/gotest.stderr"
status=$?
set -e
echo "$status" >"$dir/exit"
