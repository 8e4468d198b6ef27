#!/usr/bin/env bash
# The conformance suite's client under test: otter's headless CLI.
#
# `conformance client --command "adapter.sh" --scenario NAME` starts a test
# server for the scenario, then runs this script with the server's URL as
# the last argument and MCP_CONFORMANCE_SCENARIO=NAME in the environment
# (MCP_CONFORMANCE_CONTEXT holds scenario data as JSON, e.g. OAuth client
# credentials). It maps each scenario to what a user would type.
#
# OTTER_BIN is the otter binary to run (the Go test harness builds it).
set -euo pipefail

url="${*: -1}"
otter="${OTTER_BIN:?OTTER_BIN must name the otter binary}"
scenario="${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set}"

# context KEY prints a string field of MCP_CONFORMANCE_CONTEXT ("" if none).
context() {
  node -e 'const c = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}"); const v = c[process.argv[1]]; process.stdout.write(typeof v === "string" ? v : "")' "$1"
}

case "$scenario" in
initialize)
  exec "$otter" mcp tools --url "$url"
  ;;
tools_call)
  exec "$otter" mcp call --url "$url" add_numbers '{"a":5,"b":3}'
  ;;
elicitation-sep1034-client-defaults)
  exec "$otter" mcp call --elicit accept-defaults --url "$url" test_client_elicitation_defaults '{}'
  ;;
sse-retry)
  exec "$otter" mcp call --url "$url" test_reconnection '{}'
  ;;
auth/client-credentials-*)
  # A machine client (client_credentials grant, no browser) with the
  # scenario's client ID and its secret or, for private_key_jwt, its
  # private key (handed over through a pipe, not a file).
  cc=(--oauth-grant client_credentials --oauth-client-id "$(context client_id)")
  if [ -n "$(context private_key_pem)" ]; then
    exec "$otter" mcp call "${cc[@]}" --oauth-private-key-file <(context private_key_pem) \
      --oauth-signing-alg "$(context signing_algorithm)" --url "$url" test-tool '{}'
  fi
  exec "$otter" mcp call "${cc[@]}" --oauth-client-secret "$(context client_secret)" --url "$url" test-tool '{}'
  ;;
auth/*)
  # OAuth (auth_test.go sets $BROWSER to a stand-in that approves). The
  # client: the pre-registered one in the scenario's context if any, else
  # the client ID metadata document URL the suite's server expects (where
  # it supports them), else dynamic registration.
  oauth=(--oauth-client-metadata-url "https://conformance-test.local/client-metadata.json")
  id=$(context client_id)
  if [ -n "$id" ]; then
    oauth+=(--oauth-client-id "$id" --oauth-client-secret "$(context client_secret)")
  fi
  exec "$otter" mcp call "${oauth[@]}" --url "$url" test-tool '{}'
  ;;
*)
  echo "adapter.sh: no mapping for conformance scenario $scenario" >&2
  exit 2
  ;;
esac
