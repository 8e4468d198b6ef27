#!/usr/bin/env bash
# build.sh DIR [VERSION]: otter and its launcher otter-sandbox, into DIR,
# as users get them (make build; the tests' binary, internal/testpeer).
#
# otter-sandbox is built first; its Go build ID (a hash of its content) is
# recorded in otter, which runs the otter-sandbox beside it only if the ID
# matches, and otherwise confines servers by starting itself
# (internal/sandbox/launcher.go).
#
# CGO_ENABLED=0: otter needs no C (modernc SQLite is Go), and a static
# binary starts without the dynamic loader and libc: 5 ms of every `otter`
# start on a 2-core machine (perf stat, 2026-11-27), and it runs on any Linux.
set -euo pipefail
dir=${1:?usage: build.sh DIR [VERSION]}
version=${2:-dev}
GO=${GO:-go}
export CGO_ENABLED=0
mkdir -p "$dir"
"$GO" build -o "$dir/otter-sandbox" ./cmd/otter-sandbox
id=$("$GO" tool buildid "$dir/otter-sandbox")
"$GO" build -ldflags "-X main.version=$version -X github.com/otter-sh/otter/internal/sandbox.companionBuildID=$id" \
	-o "$dir/otter" ./cmd/otter
