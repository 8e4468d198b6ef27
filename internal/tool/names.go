package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// MaxNameLen is the longest tool name otter offers a model; the providers'
// APIs refuse longer ones.
const MaxNameLen = 64

// QualifiedName is the name an MCP tool is offered under:
// mcp__<server>__<tool>, each part normalised to [A-Za-z0-9_-]. Names longer
// than MaxNameLen are cut and end in a short hash of the full name, so two
// long names that share a prefix stay distinct and a name is the same in
// every run.
func QualifiedName(server, tool string) string {
	name := ServerPrefix(server) + normalise(tool)
	if len(name) <= MaxNameLen {
		return name
	}
	return withHash(name, server, tool)
}

// withHash ends name in a short hash of server and tool, cut so that the
// whole stays within MaxNameLen.
func withHash(name, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), MaxNameLen-len(suffix))] + suffix
}

// exactName reports whether tool is its own normalised form, so that it
// keeps the qualified name it shares with another tool of its server.
func exactName(tool string) bool { return tool != "" && normalise(tool) == tool }

// ServerPrefix is how the qualified names of server's tools begin:
// mcp__<server>__ with the server's name normalised. Two servers with the
// same prefix (my.srv and my_srv) give a tool they both have the same name,
// and the Set offers only one of them.
func ServerPrefix(server string) string {
	return "mcp__" + normalise(server) + "__"
}

// normalise replaces every character outside [A-Za-z0-9_-] with '_'.
func normalise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// AllowedByFilter reports whether a server's tool called name passes the
// server's allowed_tools and denied_tools glob patterns (path.Match syntax).
// An empty allow list allows every tool; a deny match always wins.
// Malformed patterns match nothing; the config package rejects them on load.
func AllowedByFilter(allowed, denied []string, name string) bool {
	for _, p := range denied {
		if ok, _ := path.Match(p, name); ok {
			return false
		}
	}
	if len(allowed) == 0 {
		return true
	}
	for _, p := range allowed {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
