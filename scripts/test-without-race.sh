#!/usr/bin/env bash
# The part of `make test` that runs without the race detector, in one build
# of only the packages concerned (CGO_ENABLED=0, as the otter binary the
# tests build, so they share one compile):
#   - every benchmark once, to prove it still works; `make bench` reads the
#     figures (the whole output is kept in .cache/bench-smoke.log);
#   - the tests in *_test.go files marked `//go:build !race`: they move
#     hundreds of megabytes, which -race makes five to ten times slower
#     without finding anything in them. The script finds the files itself,
#     so a new one needs only the build line.
set -euo pipefail
cd "$(dirname "$0")/.."
large=$(grep -rl --include='*_test.go' -x '//go:build !race' cmd internal test || true)
benched=$(grep -rl --include='*_test.go' '^func Benchmark' cmd internal test || true)
if [ -z "$large" ] || [ -z "$benched" ]; then
	echo "test-without-race: found no //go:build !race test files or no benchmarks" >&2
	exit 1
fi
pkgs=$(for f in $large $benched; do echo "./$(dirname "$f")"; done | sort -u)
names=$(grep -ho '^func Test[A-Za-z0-9_]*' $large | sed 's/^func //' | paste -sd'|' -)
echo "without -race: each benchmark once, and ${names//|/ }"
mkdir -p .cache
log=.cache/bench-smoke.log
if ! CGO_ENABLED=0 ${GO:-go} test -count=1 -timeout 30m -ldflags=-w -run "^($names)\$" -bench . -benchtime 1x $pkgs > "$log" 2>&1; then
	cat "$log"
	echo "test-without-race: a test or benchmark failed (above)" >&2
	exit 1
fi
grep -E '^(ok|FAIL|---)' "$log"
