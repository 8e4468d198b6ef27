package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/webdata"
)

// fakeTool is a tool.Tool whose behaviour a test chooses.
type fakeTool struct {
	info tool.Info
	call func(ctx context.Context, args json.RawMessage) (*tool.Result, error)
}

func (f *fakeTool) Info() tool.Info { return f.info }
func (f *fakeTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	return f.call(ctx, args)
}

// rateLimitedEnvelope is the envelope webdata answers a refused call with.
func rateLimitedEnvelope(tool string) *tool.Result {
	env := map[string]any{"tool": tool, "status": "failed", "result": nil,
		"errors": []any{map[string]any{"code": "RATE_LIMITED", "message": "rate limit exceeded", "details": map[string]any{"retry_after": 60}}}}
	text, _ := json.Marshal(env)
	return &mcp.CallToolResult{IsError: true, StructuredContent: env, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// testTools are the fake tools the tests serve:
//   - echo: read-only, echoes its "text" argument and who called it
//   - slow: reports three progress steps, then finishes
//   - fail: always reports a tool error that quotes its arguments (as a
//     refused URL is quoted by the real tools)
//   - limited: allows one call per client, then answers RATE_LIMITED
//   - scrape_page: present so the prompts that drive it are offered
func testTools() []tool.Tool {
	var mu sync.Mutex
	used := map[string]int{}
	f := false
	return []tool.Tool{
		&fakeTool{
			info: tool.Info{Name: "echo", Title: "Echo", Description: "Echoes text.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}},
			call: func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
				var in struct{ Text string }
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, err
				}
				return tool.TextResult(in.Text + " (client " + tool.CallerFrom(ctx) + ")"), nil
			},
		},
		&fakeTool{
			info: tool.Info{Name: "slow", Description: "Takes three steps.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			call: func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				for i := 1; i <= 3; i++ {
					tool.ReportProgress(ctx, tool.Progress{Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
				}
				return tool.TextResult("done"), nil
			},
		},
		&fakeTool{
			info: tool.Info{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			call: func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				r := tool.TextResult("it broke")
				if len(args) > 2 {
					r = tool.TextResult("it broke on " + string(args))
				}
				r.IsError = true
				return r, nil
			},
		},
		&fakeTool{
			info: tool.Info{Name: "limited", Description: "One call per client.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			call: func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				c := tool.CallerFrom(ctx)
				used[c]++
				if used[c] > 1 {
					return rateLimitedEnvelope("limited"), nil
				}
				return tool.TextResult("ok for " + c), nil
			},
		},
		&fakeTool{
			info: tool.Info{Name: "scrape_page", Description: "Scrapes a page.", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
			call: func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.TextResult("scraped"), nil },
		},
	}
}

// newTestServer builds a Server over testTools (unless opts.Tools is set) with an audit ledger in a
// temporary directory; opts fields other than Tools are kept.
func newTestServer(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Tools == nil {
		set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
		set.SetBuiltins(testTools())
		opts.Tools = set
	}
	if opts.AuditLog == "" {
		opts.AuditLog = filepath.Join(t.TempDir(), "state", "audit.jsonl")
	}
	if opts.WithClient == nil {
		opts.WithClient = tool.WithCaller
	}
	if opts.Resources == nil {
		opts.Resources = []Resource{{URI: "otter://presets/article", Name: "article", Description: "Article title and body.",
			MIMEType: "application/json", Text: `{"name":"article"}`}}
	}
	opts.Version = "1.2.3-test"
	opts.Logger = slog.New(slog.NewJSONHandler(testWriter{t}, nil))
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testWriter sends logs to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// connectInMemory connects a client to s over in-memory transports, the
// way a stdio client would talk to it.
func connectInMemory(t *testing.T, s *Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	return connectInMemoryVersion(t, s, copts, "")
}

// connectInMemoryVersion is connectInMemory asking for a protocol version
// ("" for the SDK's latest).
func connectInMemoryVersion(t *testing.T, s *Server, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCPServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// readAudit returns the records of the ledger at path.
func readAudit(t *testing.T, path string) []AuditRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read audit ledger: %v", err)
	}
	var recs []AuditRecord
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func callText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsListedWithSchemasAndAnnotations(t *testing.T) {
	s := newTestServer(t, Options{})
	cs := connectInMemory(t, s, nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	for _, want := range []string{"echo", "slow", "fail", "limited", "scrape_page"} {
		if byName[want] == nil {
			t.Errorf("tools/list lacks %q; got %v", want, res.Tools)
		}
	}
	echo := byName["echo"]
	if echo == nil {
		t.FailNow()
	}
	if echo.Title != "Echo" || echo.Description != "Echoes text." {
		t.Errorf("echo title/description = %q/%q", echo.Title, echo.Description)
	}
	if echo.Annotations == nil || !echo.Annotations.ReadOnlyHint || echo.Annotations.OpenWorldHint == nil || *echo.Annotations.OpenWorldHint {
		t.Errorf("echo annotations = %+v, want readOnlyHint and openWorldHint=false", echo.Annotations)
	}
	schema, _ := json.Marshal(echo.InputSchema)
	if !strings.Contains(string(schema), `"required":["text"]`) {
		t.Errorf("echo input schema = %s, want the tool's own schema", schema)
	}
	if cs.InitializeResult().ServerInfo.Version != "1.2.3-test" {
		t.Errorf("serverInfo = %+v", cs.InitializeResult().ServerInfo)
	}
}

func TestCallOverStdioIsAuditedWithClientStdio(t *testing.T) {
	s := newTestServer(t, Options{})
	cs := connectInMemory(t, s, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(t, res); got != "hi (client stdio)" || res.IsError {
		t.Errorf("echo = %q (isError %v), want %q", got, res.IsError, "hi (client stdio)")
	}
	// Arguments that do not match the schema: a tool error naming the problem; the tool is not run.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"txt": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(callText(t, res), "text") {
		t.Errorf("invalid args: isError=%v text=%q, want an error naming the missing 'text'", res.IsError, callText(t, res))
	}
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 2 {
		t.Fatalf("audit has %d records, want 2: %+v", len(recs), recs)
	}
	if r := recs[0]; r.Client != ClientStdio || r.Tool != "echo" || r.Outcome != OutcomeOK || string(r.Arguments) != `{"text":"hi"}` {
		t.Errorf("audit record 1 = %+v", r)
	}
	if r := recs[1]; r.Outcome != OutcomeError {
		t.Errorf("audit record 2 outcome = %q, want error", r.Outcome)
	}
	fi, err := os.Stat(s.ledger.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("audit ledger mode = %v, want 0600", fi.Mode().Perm())
	}
}

func TestAuditMasksSecrets(t *testing.T) {
	s := newTestServer(t, Options{})
	cs := connectInMemory(t, s, nil)
	args := map[string]any{
		"text":     "visible-text",
		"api_key":  "s3cret-key",
		"Password": "hunter2",
		"headers":  map[string]any{"Authorization": "Bearer tok-abc", "Accept": "application/json"},
		"url":      "https://user:pw-xyz@example.com/p?access_token=qs-tok&page=2",
		"nested":   []any{map[string]any{"client-secret": "cs-123"}},
		"session":  "sess-456",
		"presigned": "https://bucket.s3.amazonaws.com/o?X-Amz-Signature=amz-sig-789&X-Amz-Expires=60" +
			"&sig=short-sig-0&Signature=cf-sig-1",
		// Secrets inside string values whose keys say nothing: a form
		// body, credentials in custom headers, a proxy URL with a token
		// as its user name, JSON sent as a string.
		"body":         "grant_type=password&username=bob&password=HUNTER2PW&client_secret=CSECRET9",
		"more_headers": map[string]any{"X-Custom": "Bearer RAWBEARER77", "X-Basic": "Basic dXNlcjpCQVNJQ1BX", "Accept-Language": "en"},
		"auth_header":  "Bearer PW3",
		"proxy":        "http://TOKEN@proxy.example:3128",
		"json_body":    `{"user":"carol","pass_phrase":"JSONPASS5","nested":"a=1&token=TOKQUERY6"}`,
		"note":         "retry with refresh_token=RTOKEN8; page=3",
		// Keys that only contain auth or code: an OAuth redirect's code=.
		"req_headers": map[string]any{"X-Auth": "XAUTH-VAL1"},
		"redirect":    "https://app.example/cb?code=OAUTHCODE2&state=st",
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.ledger.Path())
	if err != nil {
		t.Fatal(err)
	}
	line := strings.ReplaceAll(string(data), `\u0026`, "&") // json.Marshal escapes &
	for _, secret := range []string{"s3cret-key", "hunter2", "tok-abc", "pw-xyz", "qs-tok", "cs-123",
		"sess-456", "amz-sig-789", "short-sig-0", "cf-sig-1",
		"HUNTER2PW", "CSECRET9", "RAWBEARER77", "dXNlcjpCQVNJQ1BX", "PW3", "TOKEN", "JSONPASS5", "TOKQUERY6", "RTOKEN8",
		"XAUTH-VAL1", "OAUTHCODE2"} {
		if strings.Contains(line, secret) {
			t.Errorf("audit line leaks %q: %s", secret, line)
		}
	}
	for _, kept := range []string{"visible-text", "application/json", "page=2", "user:****@example.com", "X-Amz-Expires=60",
		"grant_type=password&username=bob&password=****&client_secret=****", "Bearer ****", "Basic ****",
		"http://****@proxy.example:3128", "carol", "a=1", "page=3", `"Accept-Language":"en"`} {
		if !strings.Contains(line, kept) {
			t.Errorf("audit line lacks %q (only secrets are masked): %s", kept, line)
		}
	}
}

// One record keeps at most MaxAuditArgBytes of arguments and says it cut
// them, for refused calls too. (Before, each record stored up to 4 MiB.)
func TestAuditRecordIsCapped(t *testing.T) {
	s := newTestServer(t, Options{})
	cs := connectInMemory(t, s, nil)
	big := strings.Repeat("x", 1<<20)
	cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": big}})
	cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": 5, "pad": big}}) // refused: INVALID_PARAMS
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, r := range recs {
		if len(r.Arguments) != 0 || !strings.Contains(r.ArgumentsCut, "over the 16384 a record keeps") {
			t.Errorf("record %d: %d bytes of arguments, cut %q; want none kept and the cut said", i+1, len(r.Arguments), r.ArgumentsCut)
		}
	}
}

// A tool's error message may quote the arguments (the web tools quote a
// refused URL): the ledger's error field must not leak what the arguments
// field masks.
func TestAuditMasksSecretsInErrors(t *testing.T) {
	s := newTestServer(t, Options{})
	cs := connectInMemory(t, s, nil)
	args := map[string]any{
		"url":     "http://user:pw@127.0.0.1:8080/api?api_key=q-secret-1&x=1",
		"headers": map[string]any{"X-Api-Key": "h-secret-2", "X-Custom": "Bearer h-bearer-3"},
		"body":    "user=bob&password=b-secret-4",
		"proxy":   "http://p-token-5@10.9.9.9:3128",
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fail", Arguments: args})
	if err != nil || !res.IsError {
		t.Fatalf("fail = %+v, %v; want a tool error", res, err)
	}
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 1 || recs[0].Outcome != OutcomeError {
		t.Fatalf("audit = %+v, want one error record", recs)
	}
	for _, secret := range []string{":pw@", "q-secret-1", "h-secret-2", "h-bearer-3", "b-secret-4", "p-token-5"} {
		if strings.Contains(recs[0].Error, secret) {
			t.Errorf("audit error leaks %q: %s", secret, recs[0].Error)
		}
	}
	if !strings.Contains(recs[0].Error, "it broke on") || !strings.Contains(recs[0].Error, "x=1") {
		t.Errorf("audit error = %q, want the message with only its secrets masked", recs[0].Error)
	}
}

func TestProgressNotificationsReachTheClient(t *testing.T) {
	s := newTestServer(t, Options{})
	var mu sync.Mutex
	var got []string
	cs := connectInMemory(t, s, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%v %v/%v %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message))
		},
	})
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	want := []string{"tok-1 1/3 step 1", "tok-1 2/3 step 2", "tok-1 3/3 step 3"}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= len(want) })
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("progress = %q, want %q", got, want)
	}
}

// waitFor polls cond for liveness (generous deadline; never a speed check).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLoggingSetLevelFiltersMessagesToTheClient(t *testing.T) {
	s := newTestServer(t, Options{})
	var mu sync.Mutex
	var msgs []string
	// logging/setLevel is the 2025-11-25 mechanism (Claude Desktop, the
	// conformance suite); later versions send the level with each request.
	cs := connectInMemoryVersion(t, s, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			data, _ := json.Marshal(req.Params.Data)
			mu.Lock()
			defer mu.Unlock()
			msgs = append(msgs, string(req.Params.Level)+" "+string(data))
		},
	}, "2025-11-25")
	ctx := t.Context()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(msgs) }

	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return count() >= 1 })

	// At "error", a successful call says nothing; a failed one is reported.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return count() >= 2 })
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], "info ") || !strings.Contains(msgs[0], `"tool":"echo"`) ||
		!strings.HasPrefix(msgs[1], "error ") || !strings.Contains(msgs[1], `"tool":"fail"`) {
		t.Errorf("log messages = %q, want one info for echo, then only the error for fail", msgs)
	}
}

func TestPresetsAsResourcesAndPrompts(t *testing.T) {
	s := newTestServer(t, Options{})
	cs := connectInMemory(t, s, nil)
	ctx := t.Context()
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 1 || rl.Resources[0].URI != "otter://presets/article" || rl.Resources[0].Name != "article" {
		t.Fatalf("resources = %+v", rl.Resources)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "otter://presets/article"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != `{"name":"article"}` || rr.Contents[0].MIMEType != "application/json" {
		t.Errorf("read = %+v", rr.Contents)
	}
	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// scrape_page is served, analyze_site is not: only its prompt is offered.
	if len(pl.Prompts) != 1 || pl.Prompts[0].Name != "scrape_with_preset" || pl.Prompts[0].Description == "" {
		t.Fatalf("prompts = %+v", pl.Prompts)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "scrape_with_preset", Arguments: map[string]string{"url": "https://example.com/a", "preset": "article"}})
	if err != nil {
		t.Fatal(err)
	}
	text := gp.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(text, "scrape_page") || !strings.Contains(text, "https://example.com/a") || !strings.Contains(text, `"article"`) {
		t.Errorf("prompt text = %q", text)
	}
}

func TestDailyQuotaDeniesAndIsAudited(t *testing.T) {
	s := newTestServer(t, Options{DailyQuota: 1})
	cs := connectInMemory(t, s, nil)
	ctx := t.Context()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "1"}}); err != nil || res.IsError {
		t.Fatalf("first call: %v %v", err, res)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(callText(t, res), codeQuotaExceeded) {
		t.Errorf("second call = %q, want %s", callText(t, res), codeQuotaExceeded)
	}
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 2 || recs[1].Outcome != OutcomeDenied || recs[1].Code != codeQuotaExceeded {
		t.Errorf("audit = %+v", recs)
	}
}

// TestGetStatusReportsTheDailyQuota: without a store, get_status says the
// limits are kept in memory, and shows the client's daily quota (which
// the server keeps) beside the tools' own buckets.
func TestGetStatusReportsTheDailyQuota(t *testing.T) {
	builtins, err := webdata.Tools(webdata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins(builtins)
	s := newTestServer(t, Options{Tools: set, WithClient: webdata.WithClient, DailyQuota: 5})
	cs := connectInMemory(t, s, nil)
	for range 2 {
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: webdata.NameListPresets, Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: webdata.NameGetStatus, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Result webdata.StatusReport }
	if err := json.Unmarshal([]byte(callText(t, res)), &env); err != nil {
		t.Fatal(err)
	}
	rep := env.Result
	q := rep.Limits.DailyQuota
	if rep.Limits.Store != webdata.LimitsStoreMemory || q == nil || q.Limit != 5 || q.Used != 3 || q.Remaining != 2 || !q.ResetAt.After(time.Now()) {
		t.Errorf("limits = %+v (daily quota %+v), want memory with 3 of 5 calls used", rep.Limits, q)
	}
	for _, b := range rep.Quotas {
		if b.Tool == webdata.NameListPresets && b.Remaining != b.Burst-2 {
			t.Errorf("list_presets bucket = %+v, want 2 tokens spent", b)
		}
	}
	if len(rep.Quotas) != 6 {
		t.Errorf("quotas = %+v, want the six tools' buckets", rep.Quotas)
	}
}

func TestBadAllowedOriginIsAnError(t *testing.T) {
	for _, o := range []string{"*", "app.example.org", "https://app.example.org/", "ftp://x"} {
		_, err := New(Options{Tools: tool.NewSet(tool.Options{}), AllowedOrigins: []string{o}})
		if err == nil || !strings.Contains(err.Error(), "allowed_origins") {
			t.Errorf("allowed_origins %q: %v, want an error", o, err)
		}
	}
}

func TestEmptyAPIKeyIsAnError(t *testing.T) {
	set := tool.NewSet(tool.Options{})
	_, err := New(Options{Tools: set, APIKeys: []string{""}})
	if err == nil || !strings.Contains(err.Error(), "OTTER_SERVE_KEY") {
		t.Fatalf("New with an empty key: %v, want an error explaining OTTER_SERVE_KEY", err)
	}
}

func TestPerRequestLogLevel(t *testing.T) {
	// From protocol 2026-07-28 on, the client sends the level with each
	// request instead of logging/setLevel.
	s := newTestServer(t, Options{})
	var mu sync.Mutex
	var msgs []string
	cs := connectInMemoryVersion(t, s, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			msgs = append(msgs, string(req.Params.Level))
		},
	}, "2026-07-28")
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated protocol %s, want 2026-07-28", v)
	}
	params := &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "warning"}}
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(msgs) >= 1 })
	mu.Lock()
	defer mu.Unlock()
	if msgs[0] != "error" {
		t.Errorf("log messages = %q, want the error of the failed call", msgs)
	}
}

func TestCallTimeout(t *testing.T) {
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins([]tool.Tool{&fakeTool{
		info: tool.Info{Name: "hang", Description: "Never finishes by itself.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		call: func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}})
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	s, err := New(Options{Tools: set, CallTimeout: 50 * time.Millisecond, AuditLog: audit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cs := connectInMemory(t, s, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "hang", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(callText(t, res), "did not finish within 50ms") {
		t.Errorf("hang = %q (isError %v), want a timeout naming the limit", callText(t, res), res.IsError)
	}
	recs := readAudit(t, audit)
	if len(recs) != 1 || recs[0].Outcome != OutcomeError || recs[0].Code != "TIMEOUT" {
		t.Errorf("audit = %+v", recs)
	}
}

// A site answering 429 is the tool failing (outcome error, code
// UPSTREAM_RATE_LIMITED), not otter's own rate limit: it must not count in
// the rate_limited outcome or in otter_serve_rate_limited_total, which tell
// the operator how often otter refused its clients.
func TestSiteRateLimitIsAnErrorNotOttersLimit(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Retry-After", "42")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	t.Cleanup(site.Close)
	builtins, err := webdata.Tools(webdata.Options{Config: config.Tools{
		AllowPrivateNetworks: []string{"127.0.0.1/32"},
		RateLimits:           map[string]config.RateLimit{webdata.NameScrapePage: {RPM: 60, Burst: 1}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	set := tool.NewSet(tool.Options{SpillDir: t.TempDir()})
	set.SetBuiltins(builtins)
	s := newTestServer(t, Options{Tools: set, WithClient: webdata.WithClient})
	cs := connectInMemory(t, s, nil)
	for range 2 { // the site's 429, then otter's own limit (burst 1)
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: webdata.NameScrapePage, Arguments: map[string]any{"url": site.URL + "/page"}}); err != nil {
			t.Fatal(err)
		}
	}
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 2 {
		t.Fatalf("audit = %+v, want 2 records", recs)
	}
	if r := recs[0]; r.Outcome != OutcomeError || r.Code != webdata.CodeUpstreamRateLimited || !strings.Contains(r.Error, "429") {
		t.Errorf("the site's 429: audit %+v, want outcome error with code %s", r, webdata.CodeUpstreamRateLimited)
	}
	if r := recs[1]; r.Outcome != OutcomeRateLimited || r.Code != webdata.CodeRateLimited {
		t.Errorf("otter's own limit: audit %+v, want outcome rate_limited", r)
	}
	if n := counterValue(t, s, "otter_serve_rate_limited_total", "tool", webdata.NameScrapePage); n != 1 {
		t.Errorf("otter_serve_rate_limited_total{tool=scrape_page} = %v, want 1 (otter's refusal only)", n)
	}
	for outcome, want := range map[string]float64{OutcomeError: 1, OutcomeRateLimited: 1} {
		if n := counterValue(t, s, "otter_serve_tool_calls_total", "outcome", outcome); n != want {
			t.Errorf("otter_serve_tool_calls_total{outcome=%s} = %v, want %v", outcome, n, want)
		}
	}
}

// counterValue is the sum of the series of counter name whose label has
// value, read from s's /metrics text (0 if there is none).
func counterValue(t *testing.T, s *Server, name, label, value string) float64 {
	t.Helper()
	var text bytes.Buffer
	s.metrics.write(&text)
	sum := 0.0
	for line := range strings.Lines(text.String()) {
		labels, rest, ok := strings.Cut(strings.TrimPrefix(line, name+"{"), "} ")
		if !ok || !strings.HasPrefix(line, name+"{") || !strings.Contains(","+labels+",", ","+label+"="+strconv.Quote(value)+",") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}
