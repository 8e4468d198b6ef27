package tool

// The types a Set hands out; set.go holds the Set itself.

// Entry is one tool as offered to a model: its qualified name and the tool.
//
//	built-ins:  scrape_page
//	MCP tools:  mcp__<server>__<tool>, each part normalised to [A-Za-z0-9_-],
//	            at most 64 characters in all (a stable short hash keeps long
//	            names unique)
type Entry struct {
	Name string
	Info Info
	Tool Tool
}

// Collision reports two tools that normalised to the same qualified name.
// The built-in (or, between MCP tools, the first in sorted order) keeps the
// name; the other is reported here and in the log, never silently dropped.
type Collision struct {
	Name    string // the contested qualified name
	Kept    Info
	Dropped Info
}

// Options configure a Set.
type Options struct {
	// MaxOutputChars caps the text a tool result contributes to a model's
	// context. Default 100_000.
	MaxOutputChars int
	// SpillDir is where the full output of a capped result is written, so
	// the cut text can name a file holding everything.
	SpillDir string
}
