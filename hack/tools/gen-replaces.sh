#!/usr/bin/env bash
# gen-replaces.sh pins a module that builds Kubernetes binaries (hack/tools
# by default, or the one -C names) to a Kubernetes release, e.g.
#
#   hack/tools/gen-replaces.sh v1.36.3 v3.6.8
#   hack/tools/gen-replaces.sh -C hack/kcm v1.37.2
#
# k8s.io/kubernetes replaces every k8s.io staging module with a ./staging
# path that is missing from its module zip, so a module that requires it
# must replace each of them with the matching published v0.MINOR.PATCH
# release. This script reads the list from k8s.io/kubernetes's own go.mod,
# rewrites the requirements and the k8s.io replace directives of the module
# (other replace directives are kept), and tidies it. The second argument is
# the etcd server version that release uses (see go.etcd.io/etcd/server/v3
# in k8s.io/kubernetes's go.mod); it is required when the module builds
# etcd (a "go.etcd.io/etcd/server/v3" tool directive, as in hack/tools).
set -euo pipefail

usage="usage: gen-replaces.sh [-C module dir] <k8s version, e.g. v1.36.3> [etcd version, e.g. v3.6.8]"
dir=$(dirname "${BASH_SOURCE[0]}")
if [[ ${1:-} == -C ]]; then
	dir=${2:?$usage}
	shift 2
fi
k8s=${1:?$usage}
etcd=${2:-}
staging="v0.${k8s#v1.}"
cd "$dir"
[[ -f go.mod ]] || { echo "gen-replaces: no go.mod in $dir" >&2; exit 1; }
export GOWORK=off GOFLAGS=-mod=mod

builds_etcd=$(go mod edit -json | awk '/^\t"Tool": \[/ { t = 1 } t && $2 == "\"go.etcd.io/etcd/server/v3\"" { print "yes"; exit }')
if [[ -n $builds_etcd && -z $etcd ]]; then
	echo "gen-replaces: $dir builds etcd: give the etcd version too ($usage)" >&2
	exit 2
fi

gomod=$(go mod download -json "k8s.io/kubernetes@$k8s" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[[ -f "$gomod" ]] || { echo "gen-replaces: no go.mod for k8s.io/kubernetes@$k8s" >&2; exit 1; }

# Replace the existing k8s.io replace directives with one block holding a
# line per staging module, in k8s.io/kubernetes's order. The block takes the
# place of the first old one (or goes at the end), so reruns are
# byte-identical. Other replace directives are kept: a single-line one where
# it was, one from inside a replace block as a single line after the block.
block=$(
	echo "replace ("
	awk -v v="$staging" '$2 == "=>" && $3 ~ /^\.\/staging\// {print "\t" $1 " => " $1 " " v}' "$gomod"
	echo ")"
)
awk -v block="$block" '
	function emit() { if (!done) { print block; done = 1 } }
	/^replace \($/ { emit(); skip = 1; next }
	skip && /^\)$/ { skip = 0; next }
	skip { if ($1 !~ /^k8s\.io\//) { sub(/^[[:space:]]+/, ""); kept = kept "replace " $0 "\n" } next }
	/^replace k8s\.io\// { emit(); next }
	{ print }
	END { if (!done) print "\n" block; if (kept != "") printf "\n%s", kept }
' go.mod >go.mod.new
mv go.mod.new go.mod
go mod edit -require="k8s.io/kubernetes@$k8s"
[[ -z $etcd ]] || go mod edit -require="go.etcd.io/etcd/server/v3@$etcd"
go mod tidy
echo "gen-replaces: $dir now pins k8s.io/kubernetes $k8s (staging $staging)${etcd:+ and etcd $etcd}" >&2
