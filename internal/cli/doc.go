// Package cli is otter's headless front end, the mirror of internal/tui:
// what the commands that run without the TUI do once cmd/otter has parsed
// their flags into options — `otter -p` and its printer (text, json,
// stream-json), `otter mcp list|tools|call|login|logout|import|serve`,
// `otter mcp search` and `add --from-registry` (the MCP Registry),
// `otter config`, `otter trust` and `otter sessions
// list|show|search|rm|export` — and how they answer the core's
// questions without a person (the --elicit and --allow-tools policies).
//
// Its contract with scripts: results on stdout, everything else (logs,
// prompts, progress, errors) on stderr; exit 1 when a tool or the turn
// reports an error, 2 on usage, config or connection errors (ExitError).
// It writes only to the streams of its Factory's IOStreams.
//
// It imports agent, app, ask, attach, config, instructions, iostreams, llm,
// llmconfig, localtools, markdown, oauth, record, registry, render, schema,
// secret, serve, termtext, tool, toolname and webdata of otter's packages; never
// internal/tui nor cmd/otter, nor the MCP client (mcphost) or the session
// database (session), which it reaches through app.
// Flags are cmd/otter's: this package names them only in messages to the
// person.
package cli
