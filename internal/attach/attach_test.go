package attach_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/mcphost"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/tool"
)

const liveness = 90 * time.Second

// everything returns a manager connected to the official reference server.
func everything(t *testing.T) (*mcphost.Manager, *tool.Set) {
	t.Helper()
	p := testpeer.Require(t)
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir(), MaxOutputChars: 2000})
	srv := config.Server{Name: "everything", Command: p.Node, Args: []string{p.Everything, "stdio"},
		StartupTimeout: config.Duration{Duration: liveness}}
	m := mcphost.New(config.MCP{Servers: []config.Server{srv}}, servers.Options{Tools: set})
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	m.Start(ctx)
	if err := m.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Status("everything"); st.State != servers.StateConnected {
		t.Fatalf("everything is %s: %s", st.State, st.Error)
	}
	return m, set
}

func TestMentions(t *testing.T) {
	t.Parallel()
	known := func(s string) bool { return s == "docs" || s == "everything" }
	cases := []struct {
		text string
		want []string
	}{
		{"read @docs:file:///a.md.", []string{"docs file:///a.md"}},
		{"(see @everything:demo://x/y) and @docs:z, ok", []string{"everything demo://x/y", "docs z"}},
		{"mail me@docs:1 or @nobody:thing", nil},
		{"@docs:a(1) @docs:", []string{"docs a(1)"}},
	}
	for _, c := range cases {
		var got []string
		for _, m := range attach.Mentions(c.text, known) {
			got = append(got, m.Server+" "+m.URI)
			if !strings.HasPrefix(c.text[m.Start:m.End], "@"+m.Server+":") || !strings.HasSuffix(c.text[m.Start:m.End], m.URI) {
				t.Errorf("%q: offsets %d..%d give %q", c.text, m.Start, m.End, c.text[m.Start:m.End])
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Mentions(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestExpandAgainstEverything(t *testing.T) {
	t.Parallel()
	m, set := everything(t)
	ctx := context.Background()

	ex, err := attach.Expand(ctx, m, set, "Summarise @everything:demo://resource/static/document/architecture.md please")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := m.ReadResource(ctx, "everything", "demo://resource/static/document/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(doc.Contents[0].Text, "\n", 2)[0]
	if !strings.HasPrefix(ex.Text, "Summarise @everything:") || !strings.Contains(ex.Text, first) {
		t.Errorf("expanded text lacks the document's first line %q:\n%.400s", first, ex.Text)
	}
	if len(ex.Attachments) != 1 || ex.Attachments[0].Kind != attach.KindText || ex.Attachments[0].MIMEType != "text/markdown" {
		t.Errorf("attachments = %+v", ex.Attachments)
	}
	// The document is longer than the cap of 2000: cut, with the rest in a file.
	if len(doc.Contents[0].Text) > 2000 && !strings.Contains(ex.Text, "[output truncated") {
		t.Errorf("a %d-byte document was not capped", len(doc.Contents[0].Text))
	}

	// A text/plain blob reads as text.
	ex, err = attach.Expand(ctx, m, set, "@everything:demo://resource/dynamic/blob/3")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Attachments) != 1 || ex.Attachments[0].Kind != attach.KindText || !strings.Contains(ex.Text, "Resource 3") {
		t.Errorf("text blob: %q, %+v", ex.Text, ex.Attachments)
	}

	// An unreadable resource fails the message, naming it.
	_, err = attach.Expand(ctx, m, set, "@everything:demo://nope")
	if err == nil || !strings.Contains(err.Error(), "@everything:demo://nope") {
		t.Errorf("unreadable resource: err = %v", err)
	}
	// A server otter does not know is text, not a mention.
	ex, err = attach.Expand(ctx, m, set, "write to @someone:else")
	if err != nil || ex.Text != "write to @someone:else" || len(ex.Attachments) != 0 {
		t.Errorf("unknown server: %+v, %v", ex, err)
	}
}

func TestPromptWithEmbeddedResource(t *testing.T) {
	t.Parallel()
	m, set := everything(t)
	res, err := m.GetPrompt(context.Background(), "everything", "resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "2"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, atts := attach.PromptMessages(set, "everything", res)
	if len(msgs) != 1 || msgs[0].Role != llm.RoleUser {
		t.Fatalf("messages = %+v", msgs)
	}
	if !strings.Contains(msgs[0].Text, "Please analyze the following resource") ||
		!strings.Contains(msgs[0].Text, "Resource 2: This is a plaintext resource") {
		t.Errorf("prompt text lacks its parts:\n%s", msgs[0].Text)
	}
	if strings.Index(msgs[0].Text, "Please analyze") > strings.Index(msgs[0].Text, "Resource 2:") {
		t.Error("the prompt's parts are out of order")
	}
	if len(atts) != 1 || atts[0].URI != "demo://resource/dynamic/text/2" {
		t.Errorf("attachments = %+v", atts)
	}
	if txt := attach.PromptText(res); !strings.Contains(txt, "[user]") || !strings.Contains(txt, "Resource 2:") {
		t.Errorf("PromptText:\n%s", txt)
	}
}

func TestPromptMessagesRolesAndImages(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG fake")
	res := &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
		{Role: "user", Content: &sdk.TextContent{Text: "look"}},
		{Role: "user", Content: &sdk.ImageContent{MIMEType: "image/png", Data: png}},
		{Role: "assistant", Content: &sdk.TextContent{Text: "I see"}},
		{Role: "assistant", Content: &sdk.ImageContent{MIMEType: "image/png", Data: png}},
		{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x://pic", MIMEType: "image/png", Blob: png}}},
	}}
	msgs, _ := attach.PromptMessages(nil, "s", res)
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3 (user, assistant, user): %+v", len(msgs), msgs)
	}
	if msgs[0].Role != llm.RoleUser || len(msgs[0].Images) != 1 || !strings.HasPrefix(msgs[0].Text, "look") {
		t.Errorf("first: %+v", msgs[0])
	}
	if msgs[1].Role != llm.RoleAssistant || len(msgs[1].Images) != 0 || !strings.Contains(msgs[1].Text, "[image: image/png") {
		t.Errorf("assistant: %+v", msgs[1])
	}
	if msgs[2].Role != llm.RoleUser || len(msgs[2].Images) != 1 || !strings.Contains(msgs[2].Text, "x://pic") {
		t.Errorf("last: %+v", msgs[2])
	}
}

func TestContentsDescribesBinaryBlobs(t *testing.T) {
	t.Parallel()
	res := &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{
		{URI: "x://bin", MIMEType: "application/octet-stream", Blob: make([]byte, 2048)},
		{URI: "x://pic", MIMEType: "image/png", Blob: []byte("\x89PNG")},
	}}
	content, atts := attach.Contents("s", res)
	text, imgs := attach.ForModel(nil, content)
	if !strings.Contains(text, "[resource x://bin: binary, application/octet-stream, 2 KiB") || strings.Contains(text, "\x00") {
		t.Errorf("binary blob: %q", text)
	}
	if len(imgs) != 1 || imgs[0].MIMEType != "image/png" {
		t.Errorf("images = %+v", imgs)
	}
	if len(atts) != 2 || atts[0].Kind != attach.KindBlob || atts[1].Kind != attach.KindImage || atts[0].String() != "@s:x://bin (application/octet-stream, 2 KiB)" {
		t.Errorf("attachments = %+v", atts)
	}
}

func TestResourceToolsAgainstEverything(t *testing.T) {
	t.Parallel()
	m, _ := everything(t)
	tools := attach.Tools(m)
	ctx := context.Background()
	call := func(name, args string) *tool.Result {
		t.Helper()
		for _, tl := range tools {
			if tl.Info().Name == name {
				if !tl.Info().ReadOnly() {
					t.Errorf("%s is not read-only", name)
				}
				res, err := tl.Call(ctx, json.RawMessage(args))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
		}
		t.Fatalf("no tool %s", name)
		return nil
	}
	res := call(attach.ListToolName, `{"server":"everything"}`)
	var list []map[string]string
	text := render.Model(res)
	if err := json.Unmarshal([]byte(text[:strings.LastIndex(text, "]")+1]), &list); err != nil {
		t.Fatalf("list: %v\n%s", err, text)
	}
	uris, tmpls := 0, 0
	for _, e := range list {
		if e["uri"] != "" {
			uris++
		}
		if e["uri_template"] != "" {
			tmpls++
		}
	}
	if uris != 7 || tmpls != 2 {
		t.Errorf("listed %d resources and %d templates, want 7 and 2", uris, tmpls)
	}
	res = call(attach.ReadToolName, `{"server":"everything","uri":"demo://resource/dynamic/text/2"}`)
	if res.IsError || !strings.Contains(render.Model(res), "Resource 2: This is a plaintext resource") {
		t.Errorf("read: %v %q", res.IsError, render.Model(res))
	}
	res = call(attach.ReadToolName, `{"server":"nowhere","uri":"x"}`)
	if !res.IsError || !strings.Contains(render.Model(res), `no MCP server named "nowhere"`) {
		t.Errorf("unknown server: %q", render.Model(res))
	}
}
