#!/usr/bin/env bash
# Runs test/… — the tests that drive the real otter binary from outside
# (the conformance suites, serve's replicas on Redis) — without the race
# detector: the code they test runs in that binary, which is built without
# -race in any case; -race would instrument only their harness, whose load
# generators (64 clients, 1,100 connections) then took most of the CPU of a
# 2-core machine. `make test` starts this beside `go test -race` over
# cmd/ and internal/ and waits for both; the output comes after.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
CGO_ENABLED=0 ${GO:-go} test -count=1 -timeout 30m -ldflags=-w ./test/... > .cache/test-peers.log 2>&1
rc=$?
echo "make test: $(date +%T) test/… ended (its output follows)"
cat .cache/test-peers.log
exit $rc
