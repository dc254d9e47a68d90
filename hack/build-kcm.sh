#!/usr/bin/env bash
# build-kcm.sh builds the binaries of the kube-controller-manager harness and
# prints the directory that holds them on stdout. Everything else goes to
# stderr. The directory holds
#
#   kube-apiserver                     the release hack/kcm pins (v1.37.2)
#   etcd                               a symlink to hack/build-apiserver.sh's etcd
#   kube-controller-manager            the same release, stock
#   kube-controller-manager-listwatch  the same, with listwatch's informer factories
#
# so that internal/testing/testapiserver.Options{BinDir: dir} finds the apiserver
# and etcd there. The binaries come from the separate module hack/kcm, which
# pins k8s.io/kubernetes and requires this checkout (replace => ../..).
# Nothing of Kubernetes is committed: the sources come from the module cache.
#
# kube-controller-manager-listwatch is built with go build -overlay: patched
# copies of the non-test files of k8s.io/kubernetes/cmd/kube-controller-manager/app
# import
#
#   github.com/listwatch/listwatch/clientgo/informers                    for k8s.io/client-go/informers
#   github.com/listwatch/listwatch/clientgo/metadata/metadatainformer    for k8s.io/client-go/metadata/metadatainformer
#
# and nothing else changes. The script fails if it rewrote no import of
# either. Go refuses to overlay files in the module cache, so this build
# reads the same module graph from a vendor directory (go mod vendor, about
# 130 MB, thrown away afterwards); with -trimpath a vendored package has the
# same build cache key as the module cache's copy, so only the app package,
# main and listwatch's packages are compiled, provided the Go build cache
# still holds the stock build's packages (a cleaned cache means a full
# build). Both builds run from a snapshot of the checkout's build inputs
# (tracked and untracked non-test .go files, go.mod, go.sum and this
# script), so an edit made during a build cannot break it half-way.
#
# kube-apiserver v1.37 refuses --advertise-address=127.0.0.1 with its
# default endpoint reconciler: start it with --endpoint-reconciler-type=none
# (internal/testing/testapiserver: Options.ExtraAPIServerArgs).
#
# The directory is
#
#   ${LISTWATCH_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/listwatch/bin}/kcm-<hash>/
#
# where <hash> covers hack/kcm/go.mod, hack/kcm/go.sum, the Go version,
# GOOS/GOARCH and the build flags: kube-apiserver and the stock
# kube-controller-manager are built once per hash. The listwatch variant is
# rebuilt in place whenever the snapshot changes (its hash is in
# .listwatch-complete); go's build cache makes that incremental. Concurrent
# runs serialise on a lock file.
#
# Environment:
#   LISTWATCH_BIN_CACHE  base cache directory (default above)
#   GO                   go command to use (default: go)
set -euo pipefail

GO=${GO:-go}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
base=${LISTWATCH_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/listwatch/bin}
app=k8s.io/kubernetes/cmd/kube-controller-manager/app
log() { echo "build-kcm: $*" >&2; }

# The etcd of the v1.36 harness (v3.6); kube-apiserver v1.37 runs on it.
apidir=$(bash "$here/build-apiserver.sh")

# The snapshot: every build input of the checkout, and nothing else (a doc
# or test edit does not rebuild the variant).
mkdir -p "$base"
snap=$(mktemp -d "$base/.kcm-snap.XXXXXX")
trap 'rm -rf "$snap"' EXIT
(cd "$root" && git ls-files -z -co --exclude-standard |
	grep -zE '(^|/)go\.(mod|sum)$|\.(go|s|c|h)$|^hack/build-kcm\.sh$' | grep -zv '_test\.go$' |
	tar --null --ignore-failed-read -T - -cf -) | tar -C "$snap" -xf -
mod=$snap/hack/kcm
[[ -f $mod/go.mod && -f $mod/go.sum ]] || { log "no hack/kcm/go.mod and go.sum in the snapshot"; exit 1; }

# Stamp the Kubernetes version the way upstream's hack/lib/version.sh does:
# without it the binaries say v0.0.0-master, and kube-controller-manager
# derives its compatibility version from that.
k8s_version=$(awk '$1 == "k8s.io/kubernetes" {print $2}' "$mod/go.mod")
if [[ ! $k8s_version =~ ^v([0-9]+)\.([0-9]+)\. ]]; then
	log "cannot read the k8s.io/kubernetes version from hack/kcm/go.mod"
	exit 1
fi
ldflags='-s -w'
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=${BASH_REMATCH[1]}"
	ldflags+=" -X $pkg.gitMinor=${BASH_REMATCH[2]} -X $pkg.gitTreeState=clean"
done
goversion=$("$GO" env GOVERSION GOOS GOARCH | tr '\n' ' ')
hash=$( {
	cat "$mod/go.mod" "$mod/go.sum"
	printf '%s|-trimpath|%s\n' "$goversion" "$ldflags"
} | sha256sum | cut -c1-16)
lwhash=$( {
	echo "$hash"
	(cd "$snap" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
} | sha256sum | cut -c1-16)
out=$base/kcm-$hash
stamp=$out/.complete
lwstamp=$out/.listwatch-complete

stock_done() { [[ -f $stamp && -x $out/kube-apiserver && -x $out/kube-controller-manager ]]; }
lw_done() { [[ -x $out/kube-controller-manager-listwatch && $(cat "$lwstamp" 2>/dev/null) == "$lwhash" ]]; }
etcd_done() { [[ $(readlink "$out/etcd" 2>/dev/null) == "$apidir/etcd" ]]; }

if stock_done && lw_done && etcd_done; then
	echo "$out"
	exit 0
fi

exec 9>"$base/.lock-kcm-$hash"
flock 9

gobuild() { # gobuild <go build arguments>
	if ! (cd "$mod" && GOWORK=off GOFLAGS='-mod=readonly -buildvcs=false' \
		"$GO" build -trimpath -ldflags="$ldflags" "$@") >&2; then
		log "go build failed; if go asked for updates to go.mod, run 'go mod tidy' in hack/kcm (listwatch's go.mod changed)"
		return 1
	fi
}
links_listwatch() { # links_listwatch <binary>: whether it contains listwatch's packages
	"$GO" version -m "$1" | grep -q '^[[:space:]]dep[[:space:]]github\.com/listwatch/listwatch[[:space:]]'
}

if ! stock_done; then
	tmp=$(mktemp -d "$base/.build-kcm-$hash.XXXXXX")
	trap 'rm -rf "$snap" "$tmp"' EXIT
	start=$SECONDS
	log "building kube-apiserver and kube-controller-manager $k8s_version (this can take several minutes)"
	gobuild -o "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
	log "kube-apiserver and kube-controller-manager built in $((SECONDS - start))s"
	for b in kube-apiserver kube-controller-manager; do
		"$tmp/$b" --version >&2
		if links_listwatch "$tmp/$b"; then
			log "$b links github.com/listwatch/listwatch; it must be stock"
			exit 1
		fi
	done
	rm -rf "$out"
	mv "$tmp" "$out"
	trap 'rm -rf "$snap"' EXIT
	printf '%s\n' "$hash" >"$stamp"
fi

if ! etcd_done; then
	ln -sfn "$apidir/etcd" "$out/.etcd.tmp"
	mv -T "$out/.etcd.tmp" "$out/etcd"
fi

if ! lw_done; then
	start=$SECONDS
	# The patch: every import of the two client-go packages in the non-test
	# files of the app package, counted, so that an upstream move fails here
	# rather than building a stock binary under the variant's name.
	# go build -overlay refuses to replace files in the module cache, so the
	# variant builds from a vendor directory of the same module graph
	# (-trimpath makes a vendored package's cache key the module cache's,
	# so nothing but the patched package and its importers is recompiled).
	(cd "$mod" && GOWORK=off "$GO" mod vendor) >&2
	appdir=$mod/vendor/$app
	[[ -d $appdir ]] || { log "go mod vendor gave no $appdir"; exit 1; }
	ovl=$snap/.overlay
	mkdir -p "$ovl"
	declare -A rewrite=(
		[k8s.io/client-go/informers]=github.com/listwatch/listwatch/clientgo/informers
		[k8s.io/client-go/metadata/metadatainformer]=github.com/listwatch/listwatch/clientgo/metadata/metadatainformer
	)
	declare -A count=()
	json='{"Replace":{'
	sep=
	for f in "$appdir"/*.go; do
		[[ $f != *_test.go ]] || continue
		patched=$ovl/$(basename "$f")
		cp "$f" "$patched"
		chmod u+w "$patched"
		changed=0
		for from in "${!rewrite[@]}"; do
			# An import line: [import] [name] "path" [// comment]
			line='^[[:space:]]*(import[[:space:]]+)?([A-Za-z_.][A-Za-z0-9_]*[[:space:]]+)?"'${from//./\\.}'"[[:space:]]*(//.*)?$'
			n=$(grep -cE "$line" "$patched" || true)
			((n > 0)) || continue
			sed -i -E "/$(printf '%s' "$line" | sed 's#/#\\/#g')/ s#\"${from//./\\.}\"#\"${rewrite[$from]}\"#" "$patched"
			count[$from]=$((${count[$from]:-0} + n))
			changed=1
		done
		if ((changed)); then
			json+="$sep\"$f\":\"$patched\""
			sep=,
		else
			rm "$patched"
		fi
	done
	json+='}}'
	for from in "${!rewrite[@]}"; do
		if ((${count[$from]:-0} == 0)); then
			log "no import of $from in $appdir: upstream moved it, and this script must follow"
			exit 1
		fi
		if grep -qF "\"$from\"" "$ovl"/*.go; then
			log "the patched files of $app still mention \"$from\""
			exit 1
		fi
		log "$app: ${count[$from]} import(s) of $from now import ${rewrite[$from]}"
	done
	printf '%s\n' "$json" >"$ovl/overlay.json"
	log "building kube-controller-manager-listwatch"
	# -v names the packages compiled, i.e. not found in the build cache.
	if ! gobuild -v -mod=vendor -overlay "$ovl/overlay.json" -o "$out/.kcm-listwatch.tmp" \
		k8s.io/kubernetes/cmd/kube-controller-manager 2>"$snap/build.log"; then
		cat "$snap/build.log" >&2
		exit 1
	fi
	compiled=$(grep -c . "$snap/build.log" || true)
	if ((compiled <= 40)); then
		log "compiled $compiled packages: $(paste -sd " " "$snap/build.log")"
	else
		log "compiled $compiled packages (the build cache did not have the stock build's)"
	fi
	if ! links_listwatch "$out/.kcm-listwatch.tmp"; then
		log "kube-controller-manager-listwatch does not link github.com/listwatch/listwatch"
		exit 1
	fi
	"$out/.kcm-listwatch.tmp" --version >&2
	mv -f "$out/.kcm-listwatch.tmp" "$out/kube-controller-manager-listwatch"
	printf '%s\n' "$lwhash" >"$lwstamp.tmp"
	mv -f "$lwstamp.tmp" "$lwstamp"
	log "kube-controller-manager-listwatch built in $((SECONDS - start))s"
fi

echo "$out"
