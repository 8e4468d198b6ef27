package tui

// AppBackend's resources: the browser's lists and reads, and the @SERVER:URI
// mentions of a sent message, expanded by internal/attach as `otter -p`
// expands them.

import (
	"context"
	"fmt"

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

var _ CompletionBackend = (*AppBackend)(nil)

func (b *AppBackend) Complete(ctx context.Context, server, ref, name, arg, value string, resolved map[string]string) ([]string, error) {
	return b.app.MCP.Complete(ctx, server, ref, name, arg, value, resolved)
}

// withMentions turns a typed message into the user message for the model,
// its @SERVER:URI mentions attached, and reports the attachments through
// emit. A resource that cannot be read fails the message.
func (b *AppBackend) withMentions(ctx context.Context, text string, emit func(agent.Event)) (llm.Message, error) {
	ex, err := attach.Expander{Source: b.app.MCP, Set: b.app.Tools, Files: b.fileOptions()}.Expand(ctx, text)
	if err != nil {
		return llm.Message{}, fmt.Errorf("%w: could not read %w", ErrNotSent, err)
	}
	chips(ex.Attachments, emit)
	b.subscribe(ctx, ex.Attachments)
	ex.Text += b.takeShellContext()
	return ex.Message(), nil
}

// subscribe asks the servers that support resources/subscribe to report
// changes of the attached resources, which the transcript then notes (see
// resourceChanged). A failure costs only the note, so it is logged.
func (b *AppBackend) subscribe(ctx context.Context, atts []attach.Attachment) {
	for _, a := range atts {
		if a.Server == "" || !b.app.MCP.CanSubscribe(a.Server) { // a file
			continue
		}
		if err := b.app.MCP.Subscribe(ctx, a.Server, a.URI); err != nil {
			b.logger.Warn("subscribing to an attached resource", "server", a.Server, "uri", a.URI, "err", err)
		}
	}
}

var _ PromptBackend = (*AppBackend)(nil)

// SendPrompt sends a prompt's messages whole (attach.PromptMessages); its
// embedded resources get a chip each.
func (b *AppBackend) SendPrompt(ctx context.Context, server string, res *sdk.GetPromptResult, emit func(agent.Event)) error {
	return b.sendMessages(ctx, emit, func() ([]llm.Message, error) {
		msgs, atts := attach.PromptMessages(b.app.Tools, server, res)
		if len(msgs) == 0 {
			return nil, fmt.Errorf("the prompt from MCP server %q has no messages", server)
		}
		chips(atts, emit)
		return msgs, nil
	})
}

// chips reports attachments through emit, one chip each.
func chips(atts []attach.Attachment, emit func(agent.Event)) {
	if len(atts) == 0 {
		return
	}
	items := make([]string, len(atts))
	for i, a := range atts {
		items[i] = a.String()
	}
	emit(agent.Attached{Items: items})
}
