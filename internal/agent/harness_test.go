package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/tool"
)

// mcpTool adapts a tool of a connected MCP client session to tool.Tool, as
// otter's MCP manager does.
type mcpTool struct {
	server string
	t      *mcp.Tool
	cs     *mcp.ClientSession
}

func (m *mcpTool) Info() tool.Info {
	schema, _ := json.Marshal(m.t.InputSchema)
	return tool.Info{Name: m.t.Name, Server: m.server, Description: m.t.Description, InputSchema: schema, Annotations: m.t.Annotations}
}

func (m *mcpTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	return m.cs.CallTool(ctx, &mcp.CallToolParams{Name: m.t.Name, Arguments: args})
}

// calcServer is an in-process MCP server "calc" with a read-only add tool,
// a slow tool that runs until canceled, and ask_model, which asks the
// client's model through sampling/createMessage.
func calcServer(t testing.TB, sampler func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)) []tool.Tool {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1.0"}, &mcp.ServerOptions{
		Instructions: "Use add for sums.",
	})
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Add two numbers", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "Wait until canceled", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	type askIn struct {
		Question string `json:"question"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "ask_model", Description: "Ask the client's model", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
			// Sampling through the multi round-trip pattern (SEP-2322):
			// ask for input, and answer when the client retries with it.
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"answer": &mcp.CreateMessageParams{
					SystemPrompt: "You answer briefly.",
					MaxTokens:    100,
					Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Question}}},
				}}}, nil, nil
			}
			res, ok := req.Params.InputResponses["answer"].(*mcp.CreateMessageWithToolsResult)
			if !ok || len(res.Content) == 0 {
				return nil, nil, fmt.Errorf("unexpected sampling answer %T", req.Params.InputResponses["answer"])
			}
			text := res.Content[0].(*mcp.TextContent).Text
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "model said: " + text + " (" + res.Model + ")"}}}, nil, nil
		})

	copts := &mcp.ClientOptions{}
	if sampler != nil {
		copts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return sampler(ctx, "calc", req.Params)
		}
	}
	return connectServer(t, "calc", srv, copts)
}

// connectServer connects a client to the in-process MCP server srv and
// returns its tools as the tools of server name.
func connectServer(t testing.TB, name string, srv *mcp.Server, copts *mcp.ClientOptions) []tool.Tool {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "otter-test", Version: "1.0"}, copts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools []tool.Tool
	for _, tl := range lt.Tools {
		tools = append(tools, &mcpTool{server: name, t: tl, cs: cs})
	}
	return tools
}

// fakeTool is a built-in tool whose behaviour a test chooses.
type fakeTool struct {
	name     string
	readOnly bool
	group    string // tool.Info.PermissionGroup
	schema   string
	call     func(ctx context.Context, args json.RawMessage) (*tool.Result, error)
}

func (f *fakeTool) Info() tool.Info {
	schema := f.schema
	if schema == "" {
		schema = `{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`
	}
	return tool.Info{Name: f.name, Description: "test tool " + f.name, InputSchema: json.RawMessage(schema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: f.readOnly}, PermissionGroup: f.group}
}

func (f *fakeTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	return f.call(ctx, args)
}

// lookupWord is a read-only built-in returning a definition.
func lookupWord() *fakeTool {
	return &fakeTool{name: "lookup_word", readOnly: true, call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		var in struct{ Word string }
		_ = json.Unmarshal(args, &in)
		return tool.TextResult(in.Word + ": a definition"), nil
	}}
}

// writeNote is a built-in that changes things, so it needs permission.
func writeNote(calls *int) *fakeTool {
	var mu sync.Mutex
	return &fakeTool{name: "write_note", call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		mu.Lock()
		*calls++
		mu.Unlock()
		return tool.TextResult("note written"), nil
	}}
}

// approver records permission prompts and answers from a script.
type approver struct {
	mu        sync.Mutex
	decisions []ask.PermissionDecision
	asked     []ask.Permission
	sampling  bool
	samples   []ask.Sampling
	onAsk     func() // called as a tool permission is asked, when set
}

func (a *approver) ApproveTool(ctx context.Context, req ask.Permission) (ask.PermissionDecision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.onAsk != nil {
		a.onAsk()
	}
	a.asked = append(a.asked, req)
	if len(a.decisions) == 0 {
		return ask.Deny, nil
	}
	d := a.decisions[0]
	a.decisions = a.decisions[1:]
	return d, nil
}

func (a *approver) ApproveSampling(ctx context.Context, req ask.Sampling) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.samples = append(a.samples, req)
	return a.sampling, nil
}

func (a *approver) prompts() []ask.Permission {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ask.Permission(nil), a.asked...)
}

// harness is an agent talking to a fake model server, with a tool set of
// built-ins and the calc MCP server.
type harness struct {
	srv      *llmtest.Server
	set      *tool.Set
	agent    *agent.Agent
	approver *approver

	mu     sync.Mutex
	events []agent.Event
	onText func(string)
}

type setup struct {
	builtins []tool.Tool
	opts     func(*agent.Options)
	sampler  bool // wire the sampling handler into the MCP client
}

func newHarness(t testing.TB, kind llmtest.Kind, s setup, replies ...llmtest.Reply) *harness {
	t.Helper()
	h := &harness{srv: llmtest.New(t, kind, replies...), approver: &approver{}}
	h.set = tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	if s.builtins == nil {
		s.builtins = []tool.Tool{lookupWord()}
	}
	h.set.SetBuiltins(s.builtins)
	var sampler func(context.Context, string, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	if s.sampler {
		sampler = agent.SamplingHandler(h.srv.Provider(), "test-model", h.approver)
	}
	h.set.SetServerTools("calc", calcServer(t, sampler))
	opts := agent.Options{
		Provider:     h.srv.Provider(),
		Model:        "test-model",
		Tools:        h.set,
		Approver:     h.approver,
		WorkDir:      "/work/project",
		SystemPrompt: "Always answer in English.",
		Instructions: func() map[string]string { return map[string]string{"calc": "Use add for sums."} },
		Now:          func() time.Time { return time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC) },
		OnEvent: func(ev agent.Event) {
			h.mu.Lock()
			h.events = append(h.events, ev)
			fn := h.onText
			h.mu.Unlock()
			if d, ok := ev.(agent.TextDelta); ok && fn != nil {
				fn(d.Text)
			}
		},
		SavePermission: func(workDir, pattern, decision string) error { return nil },
	}
	if s.opts != nil {
		s.opts(&opts)
	}
	h.agent = agent.New(opts)
	return h
}

func (h *harness) send(t *testing.T, text string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.agent.Send(ctx, text)
}

func (h *harness) allEvents() []agent.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]agent.Event(nil), h.events...)
}

// finished returns the last TurnFinished event.
func (h *harness) finished(t *testing.T) agent.TurnFinished {
	t.Helper()
	evs := h.allEvents()
	for i := len(evs) - 1; i >= 0; i-- {
		if f, ok := evs[i].(agent.TurnFinished); ok {
			return f
		}
	}
	t.Fatal("no TurnFinished event")
	return agent.TurnFinished{}
}

func (h *harness) streamedText() string {
	var b strings.Builder
	for _, ev := range h.allEvents() {
		if d, ok := ev.(agent.TextDelta); ok {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

func (h *harness) toolFinished() []agent.ToolCallFinished {
	var out []agent.ToolCallFinished
	for _, ev := range h.allEvents() {
		if f, ok := ev.(agent.ToolCallFinished); ok {
			out = append(out, f)
		}
	}
	return out
}

func forEachKind(t *testing.T, fn func(t *testing.T, kind llmtest.Kind)) {
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) { fn(t, kind) })
	}
}
