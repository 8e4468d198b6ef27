package tui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/appparts"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// A message typed in the TUI with @SERVER:URI reaches the model with the
// resource's text, and the transcript gets a chip for it: the TUI's
// Conversation (NewConversation) over a real App whose MCP client talks to
// a real server.
func TestMentionedResourcesReachTheModel(t *testing.T) {
	t.Parallel()
	subscribed := make(chan string, 4)
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1.0.0"}, &sdk.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
			subscribed <- req.Params.URI
			return nil
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&sdk.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "docs://readme", MIMEType: "text/plain", Text: "otters hold hands"}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "review"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			{Role: "user", Content: &sdk.TextContent{Text: "Review this:"}},
			{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "docs://readme", MIMEType: "text/plain", Text: "otters hold hands"}}},
			{Role: "assistant", Content: &sdk.TextContent{Text: "Ready."}},
			{Role: "user", Content: &sdk.TextContent{Text: "Go on."}},
		}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"noted"}}, llmtest.Reply{Text: []string{"reviewed"}})

	base := t.TempDir()
	paths := config.Paths{
		ConfigDir: filepath.Join(base, "config"), DataDir: filepath.Join(base, "data"),
		StateDir: filepath.Join(base, "state"), CacheDir: filepath.Join(base, "cache"),
	}
	os.MkdirAll(paths.ConfigDir, 0o700)
	cfg := fmt.Sprintf("[agent]\nprovider = \"fake\"\nmodel = \"m\"\n[providers.fake]\ntype = \"openai\"\nbase_url = %q\napi_key = \"k\"\n[[mcp.servers]]\nname = \"docs\"\nurl = %q\n", model.URL, ts.URL)
	if err := os.WriteFile(paths.UserConfigFile(), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := New(Options{})
	t.Cleanup(u.finish)
	a, err := app.New(ctx, AppOptions(app.Options{Parts: appparts.Default(), Paths: paths, WorkDir: base, Logger: slog.New(slog.DiscardHandler),
		LookupEnv: func(string) (string, bool) { return "", false }}, u))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Start(ctx)
	if err := a.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	conv, err := NewConversation(ctx, u, a, app.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var chips []string
	err = conv.Send(ctx, "what does @docs:docs://readme say?", func(ev app.Event) {
		if at, ok := ev.(app.Attached); ok {
			chips = append(chips, at.Items...)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(chips) != 1 || chips[0] != "@docs:docs://readme (text/plain, 17 B)" {
		t.Errorf("chips = %q", chips)
	}
	reqs := model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[0].Text, "otters hold hands") {
		t.Fatalf("the model did not get the resource: %+v", reqs)
	}
	// The server supports resources/subscribe: the attached resource is subscribed to.
	select {
	case uri := <-subscribed:
		if uri != "docs://readme" {
			t.Errorf("subscribed to %q, want docs://readme", uri)
		}
	default:
		t.Error("sending a mention did not subscribe to the attached resource")
	}
	// A resource that cannot be read fails the message before the model is asked.
	// It says it was not sent (so the TUI gives the text back) and why.
	if err := conv.Send(ctx, "@docs:docs://missing", func(app.Event) {}); !errors.Is(err, app.ErrNotSent) || !strings.Contains(err.Error(), "could not read @docs:docs://missing") {
		t.Errorf("unreadable mention: %v", err)
	}
	if len(model.Requests()) != 1 {
		t.Error("a message with an unreadable resource reached the model")
	}

	// A prompt's messages reach the model whole: the embedded resource, the roles.
	res, err := a.GetPrompt(ctx, "docs", "review", nil)
	if err != nil {
		t.Fatal(err)
	}
	chips = nil
	if err := conv.SendPrompt(ctx, "docs", res, func(ev app.Event) {
		if at, ok := ev.(app.Attached); ok {
			chips = append(chips, at.Items...)
		}
	}); err != nil {
		t.Fatal(err)
	}
	msgs := model.Requests()[1].Messages
	n := len(msgs)
	if n < 3 || msgs[n-3].Role != "user" || !strings.Contains(msgs[n-3].Text, "Review this:") || !strings.Contains(msgs[n-3].Text, "otters hold hands") ||
		msgs[n-2].Role != "assistant" || msgs[n-2].Text != "Ready." || msgs[n-1].Text != "Go on." {
		t.Errorf("prompt messages reached the model as %+v", msgs)
	}
	if len(chips) != 1 || !strings.HasPrefix(chips[0], "@docs:docs://readme") {
		t.Errorf("prompt chips = %q", chips)
	}
}
