// Package toolname holds the rule by which otter names an MCP server's
// tools for a model: mcp__<server>__<tool>, normalised and cut to the
// length the providers accept. The tool Set names tools by it, and the
// config package warns of servers whose names give the same prefix.
//
// It is a leaf package: it imports only the standard library.
package toolname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxLen is the longest tool name otter offers a model; the providers'
// APIs refuse longer ones.
const MaxLen = 64

// Qualified is the name an MCP tool is offered under:
// mcp__<server>__<tool>, each part normalised to [A-Za-z0-9_-]. Names longer
// than MaxLen are cut and end in a short hash of the full name, so two
// long names that share a prefix stay distinct and a name is the same in
// every run.
func Qualified(server, tool string) string {
	name := Prefix(server) + normalise(tool)
	if len(name) <= MaxLen {
		return name
	}
	return WithHash(name, server, tool)
}

// WithHash ends name in a short hash of server and tool, cut so that the
// whole stays within MaxLen: the name of a tool whose plain qualified name
// is too long or taken by another tool of its server.
func WithHash(name, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), MaxLen-len(suffix))] + suffix
}

// IsNormal reports whether tool is its own normalised form, so that it
// keeps the qualified name it shares with another tool of its server.
func IsNormal(tool string) bool { return tool != "" && normalise(tool) == tool }

// Prefix is how the qualified names of server's tools begin:
// mcp__<server>__ with the server's name normalised. Two servers with the
// same prefix (my.srv and my_srv) give a tool they both have the same name,
// and the tool Set offers only one of them.
func Prefix(server string) string {
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
