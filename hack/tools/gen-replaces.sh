#!/usr/bin/env bash
# gen-replaces.sh pins hack/tools to a Kubernetes release, e.g.
#
#   hack/tools/gen-replaces.sh v1.36.3 v3.6.8
#
# k8s.io/kubernetes replaces every k8s.io staging module with a ./staging
# path that is missing from its module zip, so a module that requires it
# must replace each of them with the matching published v0.MINOR.PATCH
# release. This script reads the list from k8s.io/kubernetes's own go.mod,
# rewrites the requirements and replace directives here, and tidies the
# module. The second argument is the etcd server version that release uses
# (see go.etcd.io/etcd/server/v3 in k8s.io/kubernetes's go.mod).
set -euo pipefail

k8s=${1:?usage: gen-replaces.sh <k8s version, e.g. v1.36.3> <etcd version, e.g. v3.6.8>}
etcd=${2:?usage: gen-replaces.sh <k8s version> <etcd version>}
staging="v0.${k8s#v1.}"
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOWORK=off GOFLAGS=-mod=mod

gomod=$(go mod download -json "k8s.io/kubernetes@$k8s" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[[ -f "$gomod" ]] || { echo "gen-replaces: no go.mod for k8s.io/kubernetes@$k8s" >&2; exit 1; }

# Replace the existing replace directives with one block holding a line per
# staging module, in k8s.io/kubernetes's order. The block takes the place of
# the first old replace (or goes at the end), so reruns are byte-identical.
block=$(
	echo "replace ("
	awk -v v="$staging" '$2 == "=>" && $3 ~ /^\.\/staging\// {print "\t" $1 " => " $1 " " v}' "$gomod"
	echo ")"
)
awk -v block="$block" '
	/^replace / && !done { print block; done = 1 }
	/^replace \($/ { skip = 1; next }
	skip && /^\)$/ { skip = 0; next }
	skip || /^replace / { next }
	{ print }
	END { if (!done) print "\n" block }
' go.mod >go.mod.new
mv go.mod.new go.mod
go mod edit -require="k8s.io/kubernetes@$k8s" -require="go.etcd.io/etcd/server/v3@$etcd"
go mod tidy
echo "gen-replaces: hack/tools now pins k8s.io/kubernetes $k8s (staging $staging) and etcd $etcd" >&2
