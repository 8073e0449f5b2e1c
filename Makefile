# cdcspec: make run (the main job on embedded defaults), make test (what CI runs).
GO ?= go
PKGS := ./...

.PHONY: run test test-long race lint bench fuzz bugs check build

build:
	$(GO) build -o bin/cdcspec ./cmd/cdcspec

# The main job: exhaustive model check of the default configuration.
run: build
	./bin/cdcspec check

# What CI runs (.ci/run). Keep under 10 minutes on 2 cores.
test: lint
	$(GO) test -count=1 -timeout 9m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

race:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

test-long:
	RAPID_CHECKS=1000 RAPID_STEPS=200 CDCSPEC_LONG=1 $(GO) test -count=1 -timeout 60m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x $(PKGS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s ./traces/

bugs: build
	./bin/cdcspec bugs
