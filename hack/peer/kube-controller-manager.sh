#!/usr/bin/env bash
# kube-controller-manager.sh MODE WORKDIR: runs kube-controller-manager's own
# controller unit tests (k8s.io/kubernetes/pkg/controller/..., the release
# hack/kcm/go.mod pins) with listwatch's client-go drop-ins. Called by
# hack/peer/run.sh, which summarises WORKDIR/kube-controller-manager/gotest.json.
#
# Nothing of Kubernetes is committed: the k8s.io/kubernetes module is copied
# from the module cache into WORKDIR and a module of its own (hack/kcm's
# go.mod and go.sum, with this checkout and that copy as replacements) runs
# the tests of every package under pkg/controller/ whose test files import
# k8s.io/client-go/{informers,tools/cache,metadata/metadatainformer,
# dynamic/dynamicinformer}. MODE=listwatch rewrites exactly those imports in
# the test files to github.com/listwatch/listwatch/clientgo/...; nothing
# else changes (the controllers' own code keeps client-go's packages, as a
# contributor who switched the tests' imports would have it).
# MODE=baseline runs the same packages unchanged.
#
# Environment:
#   KCM_RACE     go test flag for the race detector (default empty: off; the
#                suite's compile alone takes most of its budget)
#   KCM_PACKAGES space-separated pkg/controller/... directories to run
#                instead of every matching one
#   GO           go command (default: go)
set -euo pipefail

mode=$1
work=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lw=${PEER_LISTWATCH_DIR:-$root}
GO=${GO:-go}
case $mode in listwatch | baseline) ;; *) echo "kube-controller-manager.sh: unknown mode $mode" >&2; exit 2 ;; esac

version=$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$root/hack/kcm/go.mod")
src=$(cd "$root/hack/kcm" && GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/kubernetes@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $src ]] || { echo "kube-controller-manager.sh: go mod download gave no directory" >&2; exit 2; }

dir=$work/kube-controller-manager
rm -rf "$dir"
mkdir -p "$dir/mod"
cp -a "$src" "$dir/kubernetes"
chmod -R u+w "$dir/kubernetes"
cp "$root/hack/kcm/go.mod" "$root/hack/kcm/go.sum" "$dir/mod/"
(cd "$dir/mod" && "$GO" mod edit -module kcmtests -droptool k8s.io/kubernetes/cmd/kube-apiserver \
	-droptool k8s.io/kubernetes/cmd/kube-controller-manager \
	-replace "github.com/listwatch/listwatch=$lw" -replace "k8s.io/kubernetes=$dir/kubernetes")
# A package under test needs a file in the module that imports nothing;
# go test runs packages of the replaced k8s.io/kubernetes by import path.
printf 'package kcmtests\n' >"$dir/mod/doc.go"

imports='"k8s.io/client-go/(informers|tools/cache|metadata/metadatainformer|dynamic/dynamicinformer)"'
cd "$dir/kubernetes"
if [[ -n ${KCM_PACKAGES:-} ]]; then
	read -r -a pkgs <<<"$KCM_PACKAGES"
else
	mapfile -t pkgs < <(grep -rlE --include='*_test.go' "$imports" pkg/controller | xargs -n1 dirname | sort -u)
fi
[[ ${#pkgs[@]} -gt 0 ]] || { echo "kube-controller-manager.sh: no package to test" >&2; exit 2; }
if [[ $mode == listwatch ]]; then
	n=0
	for p in "${pkgs[@]}"; do
		for f in "$p"/*_test.go; do
			grep -qE "$imports" "$f" || continue
			sed -i -E "s#\"k8s.io/client-go/(informers|tools/cache|metadata/metadatainformer|dynamic/dynamicinformer)\"#\"github.com/listwatch/listwatch/clientgo/\\1\"#" "$f"
			n=$((n + 1))
		done
	done
	echo "kube-controller-manager.sh: rewrote the imports of $n test files in ${#pkgs[@]} packages" >&2
fi
printf 'k8s.io/kubernetes/%s\n' "${pkgs[@]}" >"$dir/packages"

cd "$dir/mod"
set +e
# shellcheck disable=SC2046 # one import path a line
GOFLAGS=-mod=mod "$GO" test -json -count=1 ${KCM_RACE:-} -timeout "${PEER_TIMEOUT:-20m}" \
	$(cat "$dir/packages") >"$dir/gotest.json" 2>"$dir/gotest.stderr"
status=$?
set -e
echo "$status" >"$dir/exit"
