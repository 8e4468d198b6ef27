package app

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/servers"
)

// Parts are the implementations an App is built on, given by the program:
// the MCP client manager and the session database. The App builds them
// (with its own options, at its own time) through these functions, so app
// imports neither internal/mcphost nor internal/session, and neither does
// a front end over it: a front end cannot reach past the App to them.
// internal/appparts has otter's.
type Parts struct {
	// NewServers builds the MCP client manager for the configured
	// servers (internal/mcphost's New).
	NewServers func(cfg config.MCP, o servers.Options) servers.Host
	// Probe connects to a remote server once with the OAuth handler h
	// and closes the connection again (internal/mcphost's Probe).
	Probe func(ctx context.Context, srv config.Server, h auth.OAuthHandler, version string) error
	// OpenSessions opens the session database at path, for reading only
	// when readOnly (internal/session's Open and OpenReadOnly).
	OpenSessions func(ctx context.Context, path string, readOnly bool) (record.Store, error)
}

// probeServer connects to the remote server srv once with the OAuth
// handler h (which runs a login when the server asks for one) and closes
// the connection again: LoginServer's check that the token works. version
// is the client version sent in initialize.
func (p Parts) probeServer(ctx context.Context, srv config.Server, h auth.OAuthHandler, version string) error {
	if p.Probe == nil {
		return errNoPart("Probe")
	}
	return p.Probe(ctx, srv, h, version)
}

func (p Parts) openSessions(ctx context.Context, path string, readOnly bool) (record.Store, error) {
	if p.OpenSessions == nil {
		return nil, errNoPart("OpenSessions")
	}
	return p.OpenSessions(ctx, path, readOnly)
}

// errNoPart is a program's mistake: it built an App without one of its
// Parts.
func errNoPart(name string) error {
	return fmt.Errorf("otter was built without app.Parts.%s (a bug: the program must pass internal/appparts' Parts)", name)
}
