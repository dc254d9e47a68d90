GO ?= go

.PHONY: test unit lint

# test runs every test in the module under the race detector.
test: lint
	$(GO) test -race -count=1 ./...

# unit is the quick loop: every test except those that need a real apiserver.
unit:
	$(GO) test -race -count=1 -short ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
