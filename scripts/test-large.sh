#!/usr/bin/env bash
# Runs the tests kept out of the race detector's run: those in *_test.go files
# marked `//go:build !race` (they move hundreds of megabytes, which -race makes
# five to ten times slower without finding anything in them). `make test`
# calls this after `go test -race ./...`; it finds the files itself, so a new
# large test needs only the build line.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(grep -rl --include='*_test.go' -x '//go:build !race' cmd internal test || true)
if [ -z "$files" ]; then
	echo "test-large: no //go:build !race test files" >&2
	exit 1
fi
pkgs=$(for f in $files; do echo "./$(dirname "$f")"; done | sort -u)
names=$(grep -ho '^func Test[A-Za-z0-9_]*' $files | sed 's/^func //' | paste -sd'|' -)
echo "large tests without -race: ${names//|/ }"
CGO_ENABLED=0 exec ${GO:-go} test -count=1 -timeout 30m -run "^($names)\$" $pkgs
