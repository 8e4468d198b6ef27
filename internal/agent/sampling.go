package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm"
)

// ErrSamplingDeclined is wrapped by the error returned to a server whose
// sampling request was not approved.
var ErrSamplingDeclined = errors.New("the user declined the sampling request")

// SamplingHandler returns a handler for MCP sampling/createMessage requests
// (for mcp.Options.Sampler): it shows each request to approver and, when
// approved, answers it with provider and model. A declined request, or one
// that arrives with no provider configured, fails with an error the server
// receives.
func SamplingHandler(p llm.Provider, model string, approver ask.Approver) func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		if req == nil {
			return nil, errors.New("sampling request without parameters")
		}
		if p == nil {
			return nil, fmt.Errorf("otter has no model provider configured, so it cannot answer sampling requests from %s", server)
		}
		question := ask.Sampling{Server: server, SystemPrompt: req.SystemPrompt, MaxTokens: req.MaxTokens}
		var msgs []llm.Message
		for _, m := range req.Messages {
			if m == nil {
				continue
			}
			msg := llm.Message{Role: llm.RoleUser}
			if m.Role == "assistant" {
				msg.Role = llm.RoleAssistant
			}
			switch c := m.Content.(type) {
			case *mcp.TextContent:
				msg.Text = c.Text
			case *mcp.ImageContent:
				msg.Images = []llm.Image{{MIMEType: c.MIMEType, Data: c.Data}}
				msg.Text = fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data))
			case *mcp.AudioContent:
				msg.Text = fmt.Sprintf("[audio: %s, %d bytes, not supported]", c.MIMEType, len(c.Data))
			default:
				return nil, fmt.Errorf("sampling message of type %T is not supported", m.Content)
			}
			question.Messages = append(question.Messages, msg.Text)
			if msg.Role == llm.RoleUser && len(msg.Images) > 0 {
				msg.Text = "" // the image itself is sent
			}
			msgs = append(msgs, msg)
		}
		if len(msgs) == 0 {
			return nil, errors.New("sampling request without messages")
		}
		if approver == nil {
			return nil, fmt.Errorf("%w from %s: no one can approve it", ErrSamplingDeclined, server)
		}
		ok, err := approver.ApproveSampling(ctx, question)
		if err != nil {
			return nil, fmt.Errorf("%w from %s: %w", ErrSamplingDeclined, server, err)
		}
		if !ok {
			return nil, fmt.Errorf("%w from %s", ErrSamplingDeclined, server)
		}
		lreq := llm.Request{
			Model:         model,
			System:        req.SystemPrompt,
			Messages:      msgs,
			MaxTokens:     int(req.MaxTokens),
			StopSequences: req.StopSequences,
		}
		if req.Temperature != 0 {
			lreq.Temperature, lreq.HasTemperature = req.Temperature, true
		}
		resp, err := p.Stream(ctx, lreq, func(llm.Event) {})
		if err != nil {
			return nil, fmt.Errorf("sampling for %s: %w", server, err)
		}
		stop := "endTurn"
		if resp.StopReason == llm.StopMaxTokens {
			stop = "maxTokens"
		}
		return &mcp.CreateMessageResult{
			Role:       "assistant",
			Content:    &mcp.TextContent{Text: resp.Text},
			Model:      model,
			StopReason: stop,
		}, nil
	}
}
