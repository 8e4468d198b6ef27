package tool

import (
	"path"
)

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
