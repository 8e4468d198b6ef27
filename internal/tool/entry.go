package tool

import "fmt"

// The types a Set hands out; set.go holds the Set itself.

// Entry is one tool as offered to a model: its qualified name and the tool.
//
//	built-ins:  scrape_page
//	MCP tools:  mcp__<server>__<tool>, each part normalised to [A-Za-z0-9_-],
//	            at most 64 characters in all (a stable short hash keeps long
//	            names unique, and two tools of one server whose names
//	            normalise alike apart)
type Entry struct {
	Name string
	Info Info
	Tool Tool
}

// Collision reports two tools that normalised to the same qualified name,
// of which only one is offered: a built-in and an MCP tool (the built-in
// keeps the name), or tools of two servers whose names normalise alike (the
// first server in sorted order keeps it). The other is reported here and in
// the log, never silently dropped. Two tools of one server are both
// offered: the later gets a name ending in a stable short hash.
type Collision struct {
	Name    string // the contested qualified name
	Kept    Info
	Dropped Info
}

// String says which tool is not offered, why, and what to do, for a person:
//
//	tool echo of server "my_srv" is not offered: its name mcp__my_srv__echo
//	is taken by tool echo of server "my.srv"; rename one of the servers
func (c Collision) String() string {
	fix := "rename one of the servers"
	switch {
	case c.Kept.Server == "":
		fix = "rename the server"
	case c.Kept.Server == c.Dropped.Server:
		fix = "the server's two tool names differ only in characters outside [A-Za-z0-9_-]"
	}
	return fmt.Sprintf("%s is not offered: its name %s is taken by %s; %s", origin(c.Dropped), c.Name, origin(c.Kept), fix)
}

// origin names a tool and where it comes from.
func origin(i Info) string {
	if i.Server == "" {
		return "the built-in " + i.Name
	}
	return fmt.Sprintf("tool %s of server %q", i.Name, i.Server)
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
