package mcphost

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
)

// Probe connects to the remote server srv with the OAuth handler h,
// initializes a session and closes it again: what `otter mcp login` does
// to run a login (h asks for one when the server wants it) or to check
// that a stored token works. It uses the transports, headers and SSE
// fallback rule of every other connection (see TransportAuto). version is
// the client version sent in initialize.
func Probe(ctx context.Context, srv config.Server, h auth.OAuthHandler, version string) error {
	client := sdk.NewClient(&sdk.Implementation{Name: "otter", Version: version}, nil)
	cs, _, err := connectRemote(ctx, ctx, client, srv, transportName(srv), h, nil)
	if err != nil {
		return err
	}
	return cs.Close()
}
