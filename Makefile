# otter — the two commands a newcomer needs are `make run` and `make test`.

GO       ?= go
BIN      := bin/otter
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# go test flags; CI may add -race etc. -p 4 on any machine: go test's -p
# counts test binaries running as well as compiles, and the longest tests
# (the tmux and real-binary ones) mostly wait on their peers; with the
# default (one per CPU) two of them held a 2-core machine's both slots for
# minutes while nothing compiled.
# -ldflags=-w: no DWARF in the test binaries (a stack trace needs none),
# which makes linking each of the ~38 race-enabled test binaries 18 % faster.
TESTFLAGS ?= -race -count=1 -timeout 30m -p 4 -ldflags=-w
# The packages whose tests take longest, named first so that go test starts
# them first (in alphabetical order two of the longest came last and ran on
# their own for three minutes).
SLOWEST := ./cmd/otter ./internal/tui ./internal/mcphost

.PHONY: all build run test test-deps vet bench tidy-check clean

all: build

# bin/otter and bin/otter-sandbox, the small launcher otter starts its stdio
# servers with (see scripts/build.sh: static, and the launcher's build ID
# recorded in otter).
build:
	GO=$(GO) bash scripts/build.sh $(dir $(BIN)) $(VERSION)

## run: build and start the TUI (works without an API key; type /help)
run: build
	./$(BIN) $(ARGS)

## test-deps: the real peers the tests talk to (Node 22, MCP reference server,
## MCP conformance suite, tmux, chromium), installed into .cache/ and the system
test-deps:
	bash scripts/install-system-deps.sh
	bash scripts/install-test-deps.sh

## test: everything — vet, unit, integration, conformance, TUI-in-tmux tests
test:
	@# The peers install (mostly waiting on the npm registry) while vet
	@# compiles; then two runs side by side. Everything must pass, and each
	@# part says when it ended (to show which one the wall time waits on):
	@#  - go test -race over cmd/ and internal/;
	@#  - without -race: test/… (the real binary driven from outside, see
	@#    scripts/test-peers.sh) and, in one build of only the packages
	@#    concerned, each benchmark once (to prove it still works; make bench
	@#    reads the figures) and the tests that move hundreds of megabytes
	@#    (see scripts/test-without-race.sh), these two at once. Run after the
	@#    race run, the second kept the machine half idle for two minutes;
	@#    beside it, the machine stays busy to the end.
	@echo "make: $$(date +%T) installing what the tests need, and vet"; mkdir -p .cache; \
		$(MAKE) --no-print-directory test-deps > .cache/test-deps.log 2>&1 & deps=$$!; \
		$(MAKE) --no-print-directory vet; vetrc=$$?; \
		wait $$deps; depsrc=$$?; cat .cache/test-deps.log; \
		[ $$vetrc -eq 0 ] && [ $$depsrc -eq 0 ] || { echo "make test: vet or the peers' install failed (above)"; exit 1; }
	@echo "make test: $$(date +%T) deps and vet done; the race run and the run without -race start"; \
		( GO=$(GO) bash scripts/test-peers.sh & peers=$$!; \
		  GO=$(GO) bash scripts/test-without-race.sh; norace=$$?; \
		  wait $$peers; peersrc=$$?; \
		  echo "make test: $$(date +%T) the run without -race ended"; \
		  [ $$peersrc -eq 0 ] && [ $$norace -eq 0 ] ) & side=$$!; \
		$(GO) test $(TESTFLAGS) $(SLOWEST) ./cmd/... ./internal/... ./assets/...; race=$$?; \
		echo "make test: $$(date +%T) the race run over cmd/ and internal/ ended"; \
		wait $$side; siderc=$$?; \
		[ $$race -eq 0 ] && [ $$siderc -eq 0 ] || { echo "make test: a test failed (above)"; exit 1; }; \
		echo "make test: $$(date +%T) all passed"

vet:
	@fmt=$$(gofmt -l cmd internal test assets 2>/dev/null); if [ -n "$$fmt" ]; then echo "gofmt needed:"; echo "$$fmt"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet ./...
	@# macOS builds too, its tests included (its sandbox is a Seatbelt
	@# profile, off until a person opts in: a server runs unconfined and
	@# otter says so); Windows is not built yet
	@# (process groups: hooks, ! lines).
	GOOS=darwin CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/otter
	GOOS=darwin CGO_ENABLED=0 $(GO) vet ./...
	$(GO) mod tidy -diff

## bench: benchmarks that print otter-vs-baseline ratios. -p 1: one package's
## benchmarks at a time, so that no other package's load skews a ratio.
bench: test-deps
	bash -o pipefail -c "CGO_ENABLED=0 $(GO) test -p 1 -run '^$$' -bench . -benchtime 2s ./... | grep -E 'ratio=|^Benchmark|^ok|FAIL|^[a-z0-9-]+:'"

tidy-check:
	$(GO) mod tidy -diff

clean:
	rm -rf bin .cache
