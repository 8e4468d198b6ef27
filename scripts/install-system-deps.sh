#!/usr/bin/env bash
# Installs the Debian packages otter's tests drive: tmux (the TUI is tested
# in a real terminal), chromium (scrape_page's render_js) and redis-server
# (replicas of otter mcp serve share limits through it; tests start private
# instances on random ports, never a system service), jq (the hook
# scripts of the extension tests are written as Claude Code's, which read
# their JSON with jq) and ripgrep (the baseline search_files is measured
# against in make bench). Skips what is
# already there; needs root (or sudo) for what is not.
set -euo pipefail

missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-system-deps: please install: ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
echo "install-system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
