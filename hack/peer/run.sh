#!/usr/bin/env bash
# run.sh [listwatch|baseline] [suite...]: runs the peers' own test suites
# against listwatch's drop-ins (listwatch, the default) or against the
# peers' own constructors (baseline, which proves the harness), prints
# passed/failed/skipped per suite and fails on any failure not listed in
# hack/peer/known-failures.txt. Suites: controller-runtime
# controller-runtime-crcache controller-runtime-fakeapi client-go
# client-go-rewritten kube-controller-manager (all by default). See docs/testing.md, "Peer suites".
#
# Environment:
#   PEER_WORKDIR  where the peers' code is copied and built (default: a
#                 temporary directory, removed at the end unless PEER_KEEP=1)
#   PEER_RACE     go test flag for the race detector (default -race; empty: off)
#   GO            go command (default: go)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
GO=${GO:-go}
mode=${1:-listwatch}
shift || true
suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=(controller-runtime controller-runtime-crcache controller-runtime-fakeapi client-go client-go-rewritten kube-controller-manager)
case $mode in listwatch | baseline) ;; *) echo "usage: run.sh [listwatch|baseline] [controller-runtime] [controller-runtime-crcache] [controller-runtime-fakeapi] [client-go] [client-go-rewritten] [kube-controller-manager]" >&2; exit 2 ;; esac

if [[ -n ${PEER_WORKDIR:-} ]]; then
	work=$PEER_WORKDIR
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/listwatch-peer.XXXXXX")
	[[ ${PEER_KEEP:-} == 1 ]] || trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
fi
echo "peer: $mode mode, work dir $work" >&2

(cd "$here/tool" && GOWORK=off "$GO" build -o "$work/peertool" .)

# The suites build against a snapshot of the working tree (tracked and
# untracked files, not the ignored ones), so an edit made while they run
# cannot break the build half-way.
snap=$work/listwatch
rm -rf "$snap"
mkdir -p "$snap"
(cd "$root" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -C "$snap" -xf -
export PEER_LISTWATCH_DIR=$snap
known=$here/known-failures.txt
[[ $mode == listwatch ]] || known=/dev/null

status=0
summaries=()
for suite in "${suites[@]}"; do
	start=$SECONDS
	case $suite in
	controller-runtime)
		KUBEBUILDER_ASSETS=$(bash "$root/hack/build-apiserver.sh")
		export KUBEBUILDER_ASSETS
		bash "$here/controller-runtime.sh" "$mode" "$work"
		;;
	controller-runtime-crcache)
		KUBEBUILDER_ASSETS=$(bash "$root/hack/build-apiserver.sh")
		export KUBEBUILDER_ASSETS
		bash "$here/controller-runtime.sh" "$mode" "$work" crcache
		;;
	controller-runtime-fakeapi)
		# envtest's kube-apiserver only in baseline mode: in listwatch mode
		# the suites' envtest serves a fake.Server through fake/fakeapi.
		if [[ $mode == baseline ]]; then
			KUBEBUILDER_ASSETS=$(bash "$root/hack/build-apiserver.sh")
			export KUBEBUILDER_ASSETS
		fi
		bash "$here/controller-runtime-fakeapi.sh" "$mode" "$work"
		;;
	client-go | client-go-rewritten)
		# Known failures whose reason starts with "hangs" are not run at all
		# (go test -skip), or they would cost the whole timeout.
		PEER_SKIP=$("$work/peertool" hangs -suite "$suite" -known "$known")
		export PEER_SKIP
		bash "$here/$suite.sh" "$mode" "$work" "$work/peertool"
		;;
	kube-controller-manager)
		bash "$here/kube-controller-manager.sh" "$mode" "$work"
		;;
	*) echo "peer: unknown suite $suite" >&2; exit 2 ;;
	esac
	d=$work/$suite
	reports=$(find "$d" -maxdepth 1 -name 'ginkgo-*.json' | sort | paste -sd, -)
	dropped=()
	[[ ! -f $d/dropped.txt ]] || dropped=(-dropped "$d/dropped.txt")
	set +e
	out=$("$work/peertool" summary -suite "$suite" -known "$known" -gotest "$d/gotest.json" \
		-ginkgo "$reports" -exit "$(cat "$d/exit")" "${dropped[@]}")
	rc=$?
	set -e
	out="${out/peer $suite /peer $suite ($mode, $((SECONDS - start)) s) }"
	printf '%s\n' "$out"
	[[ $rc == 0 ]] || { status=1; [[ -s $d/gotest.stderr ]] && tail -20 "$d/gotest.stderr"; }
	summaries+=("$(head -1 <<<"$out")")
done
echo "peer: summary ($mode)"
printf '  %s\n' "${summaries[@]}"
[[ $status == 0 ]] && echo "peer: OK" || echo "peer: FAILED"
exit $status
