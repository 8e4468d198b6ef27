// Package appparts gives internal/app the implementations otter is built
// with: internal/mcphost's MCP client manager and internal/session's SQLite
// session database. cmd/otter passes [Default] in app.Options.Parts (and
// tests that build an App do); no other package needs to name mcphost or
// session to run a conversation.
package appparts

import (
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/mcphost"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/session"
)

// Default are otter's parts.
func Default() app.Parts {
	return app.Parts{
		NewServers:   func(cfg config.MCP, o servers.Options) servers.Host { return mcphost.New(cfg, o) },
		Probe:        mcphost.Probe,
		OpenSessions: session.OpenStore,
	}
}
