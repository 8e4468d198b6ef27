package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// convApp is an App over fresh directories whose model is the fake model
// srv, with more config appended.
func convApp(t *testing.T, srv *llmtest.Server, more string, parts ...func() string) *App {
	t.Helper()
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	cfg := fmt.Sprintf("[agent]\nprovider = \"fake\"\nmodel = \"m\"\n[providers.fake]\ntype = \"openai\"\nbase_url = %q\napi_key = \"k\"\n", srv.URL) + more
	a, err := New(context.Background(), Options{Parts: testParts, Paths: testPaths(t, cfg), WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), SystemParts: parts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// events records a turn's events.
type events struct {
	mu  sync.Mutex
	evs []agent.Event
}

func (e *events) emit(ev agent.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) find(match func(agent.Event) bool) agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.evs {
		if match(ev) {
			return ev
		}
	}
	return nil
}

// docsServer serves an MCP server "docs" with a resource and a tool, each
// request held until open is closed (a server slow to start); open nil
// serves at once.
func docsServer(t *testing.T, open <-chan struct{}) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	s.AddResource(&sdk.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "docs://readme", MIMEType: "text/plain", Text: "otters hold hands"}}}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "lookup", Description: "Looks a word up"},
		func(context.Context, *sdk.CallToolRequest, struct{ Word string }) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open != nil {
			select {
			case <-open:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func docsConfig(url string) string {
	return fmt.Sprintf("[[mcp.servers]]\nname = \"docs\"\nurl = %q\n", url)
}

// A typed @SERVER:URI mention reaches the model with the resource's text,
// with one chip; a hook's contribution goes out with it, a system part
// in the system prompt; a mention that
// cannot be read, or a hook that refuses, sends nothing.
func TestConversationMentionsAndHooks(t *testing.T) {
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"noted"}})
	a := convApp(t, model, docsConfig(docsServer(t, nil)), func() string { return "Project rule: answer in haiku." })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a.Start(ctx)
	refuse := false
	c, err := a.NewConversation(ctx, ConversationOptions{ServerWait: time.Minute, Hooks: []OutgoingHook{
		func(_ context.Context, out *Outgoing) error {
			if refuse {
				return errors.New("the hook says no")
			}
			out.Text += "\n\n<project>be brief</project>"
			out.Attached = append(out.Attached, "AGENTS.md")
			return nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	if err := c.Send(ctx, "summarise @docs:docs://readme please", ev.emit); err != nil {
		t.Fatal(err)
	}
	got := model.Requests()[0].Messages[0].Text
	if !strings.Contains(got, "otters hold hands") || !strings.Contains(got, "be brief") || !strings.HasPrefix(got, "summarise @docs:docs://readme please") {
		t.Errorf("the model got %q", got)
	}
	if sys := model.Requests()[0].System; !strings.Contains(sys, "Project rule: answer in haiku.") {
		t.Errorf("the system prompt lacks the contributed part: %q", sys)
	}
	chip, _ := ev.find(func(e agent.Event) bool { _, ok := e.(Attached); return ok }).(Attached)
	if len(chip.Items) != 2 || !strings.Contains(chip.Items[0], "docs://readme") || chip.Items[1] != "AGENTS.md" {
		t.Errorf("chips = %q", chip.Items)
	}

	if err := c.Send(ctx, "and @docs:docs://missing", ev.emit); !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "docs://missing") {
		t.Errorf("unreadable mention: %v, want ErrNotSent naming it", err)
	}
	refuse = true
	if err := c.Send(ctx, "plain", ev.emit); !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "the hook says no") {
		t.Errorf("refusing hook: %v", err)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model requests, want only the first message's", n)
	}
}

// The first message waits for a server still starting, saying so, and
// goes out with its tools; SendNow sends at once without them.
func TestConversationFirstMessageWaitsForServers(t *testing.T) {
	for _, sendNow := range []bool{false, true} {
		t.Run(fmt.Sprint("sendNow=", sendNow), func(t *testing.T) {
			model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}}, llmtest.Reply{Text: []string{"ok"}})
			open := make(chan struct{})
			a := convApp(t, model, docsConfig(docsServer(t, open)))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			a.Start(ctx)
			c, err := a.NewConversation(ctx, ConversationOptions{ServerWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			waiting := make(chan WaitingForServers, 1)
			var ev events
			emit := func(e agent.Event) {
				if w, ok := e.(WaitingForServers); ok {
					waiting <- w
				}
				ev.emit(e)
			}
			done := make(chan error, 1)
			go func() { done <- c.Send(ctx, "use the docs", emit) }()
			w := <-waiting
			if len(w.Servers) != 1 || w.Servers[0].Name != "docs" || w.Servers[0].Within != 30*time.Second {
				t.Errorf("waiting for %+v, want docs within 30s", w.Servers)
			}
			if sendNow {
				if !c.SendNow() {
					t.Error("SendNow found no wait running")
				}
			} else {
				close(open)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if ev.find(func(e agent.Event) bool { _, ok := e.(ServersReady); return ok }) == nil {
				t.Error("no ServersReady")
			}
			offered := slices.Contains(model.Requests()[0].Tools, "mcp__docs__lookup")
			if offered == sendNow {
				t.Errorf("sendNow=%v: the first request offered %v", sendNow, model.Requests()[0].Tools)
			}
			if sendNow {
				close(open)
			}
			// Only the first message waits.
			var ev2 events
			if err := c.Send(ctx, "again", ev2.emit); err != nil {
				t.Fatal(err)
			}
			if ev2.find(func(e agent.Event) bool { _, ok := e.(ServersReady); return ok }) != nil {
				t.Error("the second message waited again")
			}
		})
	}
}

// Continuing resumes the latest conversation with a note; after Clear,
// continuing does not bring the cleared conversation back (a new one
// begins, and the note says why), while resuming it by ID still does.
func TestConversationContinueAndClear(t *testing.T) {
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"one"}}, llmtest.Reply{Text: []string{"two"}}, llmtest.Reply{Text: []string{"three"}})
	a := convApp(t, model, "")
	ctx := context.Background()
	c, err := a.NewConversation(ctx, ConversationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "remember the secret word: heron", nil); err != nil {
		t.Fatal(err)
	}
	first := c.SessionID()

	c2, err := a.NewConversation(ctx, ConversationOptions{Session: SessionOptions{Continue: true}})
	if err != nil {
		t.Fatal(err)
	}
	if info, entries := c2.Resumed(); info.ID != first || len(entries) != 2 {
		t.Fatalf("continue: %+v, %d entries", info, len(entries))
	}
	if n := c2.Notes(); len(n) != 1 || !strings.HasPrefix(n[0], "Continuing session "+first[:8]+" (remember the secret word: heron, 2 messages, last ") {
		t.Errorf("notes = %q", n)
	}

	if err := c2.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	c3, err := a.NewConversation(ctx, ConversationOptions{Session: SessionOptions{Continue: true}})
	if err != nil {
		t.Fatal(err)
	}
	if info, entries := c3.Resumed(); info.ID != "" || len(entries) != 0 {
		t.Errorf("continue after clear resumed %+v (%d entries)", info, len(entries))
	}
	if n := c3.Notes(); len(n) != 1 || !strings.Contains(n[0], first[:8]) || !strings.Contains(n[0], "was cleared") {
		t.Errorf("notes after clear = %q", n)
	}
	if err := c3.Send(ctx, "what was the word?", nil); err != nil {
		t.Fatal(err)
	}
	if msgs := model.Requests()[1].Messages; len(msgs) != 1 {
		t.Errorf("after clear the model got %d messages, want only the new one", len(msgs))
	}
	if c3.SessionID() == first || c3.SessionID() == "" {
		t.Errorf("after clear the conversation saves to %q (first %q)", c3.SessionID(), first)
	}

	// By its ID the cleared conversation comes back, and is again the
	// one to continue once taken up.
	c4, err := a.NewConversation(ctx, ConversationOptions{Session: SessionOptions{Resume: first[:8]}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c4.Send(ctx, "and now?", nil); err != nil {
		t.Fatal(err)
	}
	if msgs := model.Requests()[2].Messages; len(msgs) != 3 || !strings.Contains(msgs[0].Text, "heron") {
		t.Errorf("resumed by ID, the model got %+v", msgs)
	}
	c5, err := a.NewConversation(ctx, ConversationOptions{Session: SessionOptions{Continue: true}})
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := c5.Resumed(); info.ID != first {
		t.Errorf("continue after taking it up again: %q, want %q", info.ID, first)
	}
}
