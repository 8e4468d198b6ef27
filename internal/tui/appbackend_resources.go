package tui

// AppBackend's resources: the browser's lists and reads, and prompts
// (the Conversation expands a message's @SERVER:URI mentions).

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
)

var _ ResourceBackend = (*AppBackend)(nil)

func (b *AppBackend) Resources() []app.Resource { return b.app.Resources() }

func (b *AppBackend) ResourceTemplates() []app.ResourceTemplate {
	return b.app.ResourceTemplates()
}

func (b *AppBackend) ReadResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	return b.app.ReadResource(ctx, server, uri)
}

var _ CompletionBackend = (*AppBackend)(nil)

func (b *AppBackend) Complete(ctx context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
	return b.app.Complete(ctx, server, ref, name, arg, value, resolved)
}

var _ PromptBackend = (*AppBackend)(nil)

// SendPrompt sends a prompt's messages whole; its embedded resources get
// a chip each.
func (b *AppBackend) SendPrompt(ctx context.Context, server string, res *sdk.GetPromptResult, emit func(agent.Event)) error {
	return b.shown(emit, func(emit func(agent.Event)) error { return b.conv.SendPrompt(ctx, server, res, emit) })
}
