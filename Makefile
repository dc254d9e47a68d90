GO ?= go

.PHONY: test unit e2e lint apiserver staticcheck bgcontext doclinks api-check api-update clientgo-gen clientgo-check demo bench peer peer-baseline

# test runs every test in the module under the race detector, including the
# tests against a real kube-apiserver + etcd (built and cached on first use).
test: lint apiserver
	$(GO) test -race -count=1 -timeout 30m ./...

# unit is the quick loop: every test except those that need a real apiserver.
unit:
	$(GO) test -race -count=1 -short ./...

# e2e runs only the tests against the real apiserver.
e2e: apiserver
	$(GO) test -race -count=1 ./internal/testing/testapiserver/... ./test/e2e/...

# peer runs the peers' own test suites against listwatch's drop-ins:
# controller-runtime's pkg/cache, pkg/controller and pkg/source (envtest, a
# real kube-apiserver) with the cache's informers from
# informer.NewSharedIndexInformer, pkg/cache, pkg/controller, pkg/source
# and pkg/builder again with every cache.New (and a manager's default)
# replaced by crcache.New (controller-runtime-crcache), pkg/client,
# pkg/cache and pkg/manager with envtest serving fake/fakeapi instead of
# kube-apiserver (controller-runtime-fakeapi), client-go's
# shared-informer, workqueue
# and RetryWatcher tests ported onto the drop-ins, and every test of the
# client-go packages clientgo/ covers run against clientgo/ with only their
# import paths rewritten (client-go-rewritten), and kube-controller-manager's
# controller unit tests (k8s.io/kubernetes/pkg/controller/...) with their
# test files' informer imports switched to clientgo/
# (kube-controller-manager). Fails on a failure not in
# hack/peer/known-failures.txt. peer-baseline runs the same suites with the
# peers' own constructors and packages. See docs/testing.md, "Peer suites".
peer: apiserver
	bash hack/peer/run.sh listwatch

peer-baseline: apiserver
	bash hack/peer/run.sh baseline

# apiserver builds (or finds cached) kube-apiserver v1.36.3 and etcd v3.6.8
# for the real-apiserver tests; see docs/testing.md.
apiserver:
	bash hack/build-apiserver.sh >/dev/null

STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(MAKE) --no-print-directory staticcheck
	$(MAKE) --no-print-directory bgcontext
	$(MAKE) --no-print-directory doclinks
	$(MAKE) --no-print-directory api-check
	$(MAKE) --no-print-directory clientgo-check

# staticcheck installs staticcheck from the module proxy (pinned) and runs it.
# SA4023 is off: v0.8.2 panics in it on this module.
staticcheck:
	@test -x $(STATICCHECK) && $(STATICCHECK) -version | grep -q $(STATICCHECK_VERSION:v%=%) || \
		GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) -checks "inherit,-SA4023" ./...

# bgcontext fails on a test that calls context.Background() or context.TODO()
# where t.Context() (b.Context(), f.Context()) is at hand; a call that needs
# its own context says why with //lint:allow-background <reason>. Files not
# moved yet are listed, with their counts, in hack/tools/bgcontext/allow.txt.
# The tool is in the hack/tools module (standard library only).
bgcontext:
	$(GO) -C hack/tools run ./bgcontext -allow bgcontext/allow.txt $(CURDIR)

# doclinks fails on a doc link ([Name], [Type.Method], [pkg.Name]) in a Go
# comment of the module that names nothing, which go doc would show as
# plain text: a rename must take its links along. In the hack/tools module
# (standard library only).
doclinks:
	$(GO) -C hack/tools run ./doclinks $(CURDIR)

# api-check fails when the exported API of the library packages differs from
# hack/api/api.txt (one declaration per line, from the compiler's export
# data; see hack/api/main.go); api-update rewrites it. Commit api.txt with
# the change that alters the API, so that the change shows in review.
api-check:
	$(GO) run ./hack/api

api-update:
	$(GO) run ./hack/api -w

# clientgo-gen rewrites clientgo/.../zz_generated.reexport.go: every exported
# name of the covered client-go packages (the version go.mod requires) that
# the listwatch package does not define by hand, re-exported (types as
# aliases, functions as wrappers, constants, error variables copied). It
# fails when a hand-written name does not have client-go's signature.
# clientgo-check (in lint) fails when a generated file is stale or a package
# lacks a name client-go exports. See hack/clientgo-reexport/main.go and
# docs/clientgo.md. Before them, hack/clientgo-informers writes
# restsource/builtin/zz_generated.types.go (the table of client-go's
# built-in types with their restsource constructors) and
# clientgo/informers/zz_generated.builtins.go (the drop-in factory's group
# accessors and its columns of each type), which the re-export generator
# reads as the package's own.
clientgo-gen:
	$(GO) run ./hack/clientgo-informers
	$(GO) run ./hack/clientgo-reexport

clientgo-check:
	$(GO) run ./hack/clientgo-informers -check
	$(GO) run ./hack/clientgo-reexport -check

# demo runs the example controller against the embedded simulated cluster
# for about a minute; pass flags with DEMO_FLAGS, e.g.
#   make demo DEMO_FLAGS="--duration 15s --seed 7"
#   make demo DEMO_FLAGS="--kubeconfig ~/.kube/config"
demo:
	$(GO) run ./cmd/listwatch demo $(DEMO_FLAGS)

# bench runs the side-by-side benchmarks against client-go and rewrites the
# table in docs/benchmarks/make-bench.md (BENCH_COUNT=3 for a quick run); see
# hack/bench.sh. Never part of make test.
bench:
	bash hack/bench.sh
