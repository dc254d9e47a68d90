#!/usr/bin/env bash
# build-apiserver.sh builds the real kube-apiserver and etcd binaries used by
# the integration harness (internal/testing/testapiserver) and prints the directory
# that holds them on stdout. Everything else goes to stderr.
#
# The binaries come from the separate module in hack/tools, which pins
# k8s.io/kubernetes and go.etcd.io/etcd/server/v3. They are cached in
#
#   ${LISTWATCH_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/listwatch/bin}/<versions-hash>/
#
# where <versions-hash> covers hack/tools/go.mod, hack/tools/go.sum, the Go
# version, GOOS/GOARCH and the build flags. A second run with the same inputs
# only hashes a few files and prints the directory (well under a second).
# Concurrent runs (e.g. two test binaries) serialise on a lock file; the
# loser finds the finished build and returns at once.
#
# Environment:
#   LISTWATCH_BIN_CACHE  base cache directory (default above)
#   GO                   go command to use (default: go)
set -euo pipefail

GO=${GO:-go}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tools="$here/tools"
base=${LISTWATCH_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/listwatch/bin}

# Stamp the Kubernetes version the way upstream's hack/lib/version.sh does:
# without it the binary says v0.0.0-master and derives its compatibility
# version from that.
k8s_version=$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$tools/go.mod")
if [[ ! $k8s_version =~ ^v([0-9]+)\.([0-9]+)\. ]]; then
	echo "build-apiserver: cannot read the k8s.io/kubernetes version from $tools/go.mod" >&2
	exit 1
fi
ldflags='-s -w'
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=${BASH_REMATCH[1]}"
	ldflags+=" -X $pkg.gitMinor=${BASH_REMATCH[2]} -X $pkg.gitTreeState=clean"
done
goversion=$("$GO" env GOVERSION GOOS GOARCH | tr '\n' ' ')
hash=$( {
	cat "$tools/go.mod" "$tools/go.sum"
	printf '%s|-trimpath|%s\n' "$goversion" "$ldflags"
} | sha256sum | cut -c1-16)
out="$base/$hash"
stamp="$out/.complete"

if [[ -f "$stamp" && -x "$out/kube-apiserver" && -x "$out/etcd" ]]; then
	echo "$out"
	exit 0
fi

mkdir -p "$base"
exec 9>"$base/.lock-$hash"
flock 9
# Another process may have finished the build while we waited for the lock.
if [[ -f "$stamp" && -x "$out/kube-apiserver" && -x "$out/etcd" ]]; then
	echo "$out"
	exit 0
fi

tmp=$(mktemp -d "$base/.build-$hash.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

build() { # build <output name> <package>
	local start=$SECONDS
	echo "build-apiserver: building $2 (this can take several minutes)" >&2
	(cd "$tools" && GOWORK=off GOFLAGS='-mod=readonly -buildvcs=false' \
		"$GO" build -trimpath -ldflags="$ldflags" -o "$tmp/$1" "$2") >&2
	echo "build-apiserver: $1 built in $((SECONDS - start))s" >&2
}

build etcd go.etcd.io/etcd/server/v3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver

"$tmp/kube-apiserver" --version >&2
"$tmp/etcd" --version >&2

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
printf '%s\n' "$hash" >"$stamp"
echo "$out"
