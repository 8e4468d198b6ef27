package tui

// AppBackend's resources: the browser's lists and reads, and the @SERVER:URI
// mentions of a sent message, expanded by internal/attach as `otter -p`
// expands them.

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/mcphost"
)

var _ ResourceBackend = (*AppBackend)(nil)

func (b *AppBackend) Resources() []mcphost.Resource { return b.app.MCP.Resources() }

func (b *AppBackend) ResourceTemplates() []mcphost.ResourceTemplate {
	return b.app.MCP.ResourceTemplates()
}

func (b *AppBackend) ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	return b.app.MCP.ReadResource(ctx, server, uri)
}

// withMentions turns a typed message into the user message for the model,
// its @SERVER:URI mentions attached, and reports the attachments through
// emit. A resource that cannot be read fails the message.
func (b *AppBackend) withMentions(ctx context.Context, text string, emit func(agent.Event)) (llm.Message, error) {
	ex, err := attach.Expand(ctx, b.app.MCP, b.app.Tools, text)
	if err != nil {
		return llm.Message{}, err
	}
	if len(ex.Attachments) > 0 {
		items := make([]string, len(ex.Attachments))
		for i, a := range ex.Attachments {
			items[i] = a.String()
		}
		emit(agent.Attached{Items: items})
	}
	return ex.Message(), nil
}
