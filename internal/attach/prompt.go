package attach

import (
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/tool"
)

// PromptMessages turns a prompts/get result into the messages the model
// reads, whole and in order: text as text, images as images, embedded
// resources by their contents (as Contents does), resource links and audio
// described. Consecutive messages of one role become one message, since
// providers want the roles to alternate. Images of an assistant message,
// which providers do not accept, are described instead. set caps each
// embedded resource's text (nil: uncapped).
func PromptMessages(set *tool.Set, server string, res *sdk.GetPromptResult) ([]llm.Message, []Attachment) {
	if res == nil {
		return nil, nil
	}
	var out []llm.Message
	var atts []Attachment
	for _, pm := range res.Messages {
		if pm == nil || pm.Content == nil {
			continue
		}
		role := llm.RoleUser
		if pm.Role == "assistant" {
			role = llm.RoleAssistant
		}
		var content []sdk.Content
		switch c := pm.Content.(type) {
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			var a []Attachment
			content, a = Contents(server, &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c.Resource}})
			atts = append(atts, a...)
		default:
			content = []sdk.Content{c}
		}
		text, imgs := ForModel(set, content)
		if role == llm.RoleAssistant && len(imgs) > 0 {
			imgs = nil // already described in text
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			prev := &out[n-1]
			prev.Text = joinText(prev.Text, text)
			prev.Images = append(prev.Images, imgs...)
			continue
		}
		out = append(out, llm.Message{Role: role, Text: text, Images: imgs})
	}
	return out, atts
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// PromptText renders a prompts/get result for a person: each message under
// its role, embedded resources with their text, binary content described.
func PromptText(res *sdk.GetPromptResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for i, pm := range res.Messages {
		if pm == nil || pm.Content == nil {
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n%s\n", pm.Role, render.Terminal(&tool.Result{Content: []sdk.Content{pm.Content}}, nil))
	}
	return b.String()
}
