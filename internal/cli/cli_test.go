package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/servers"
	"github.com/otter-sh/otter/internal/tool"
)

func TestParseCallArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args  []string
		adhoc bool
		want  CallTarget
	}{
		{[]string{"get_status"}, false, CallTarget{Tool: "get_status"}},
		{[]string{"scrape_page", `{"url":"x"}`}, false, CallTarget{Tool: "scrape_page", Args: `{"url":"x"}`}},
		{[]string{"scrape_page", "-"}, false, CallTarget{Tool: "scrape_page", Args: "-"}},
		{[]string{"everything", "get-sum"}, false, CallTarget{Server: "everything", Tool: "get-sum"}},
		{[]string{"everything", "get-sum", "{}"}, false, CallTarget{Server: "everything", Tool: "get-sum", Args: "{}"}},
		{[]string{"get-sum", " {}"}, true, CallTarget{Tool: "get-sum", Args: " {}"}},
		{[]string{"get-sum"}, true, CallTarget{Tool: "get-sum"}},
	} {
		got, err := ParseCallArgs(tc.args, tc.adhoc)
		if err != nil || got != tc.want {
			t.Errorf("ParseCallArgs(%q, %v) = %+v, %v; want %+v", tc.args, tc.adhoc, got, err, tc.want)
		}
	}
	if _, err := ParseCallArgs([]string{"srv", "tool", "{}"}, true); err == nil {
		t.Error("SERVER with an ad hoc server: no error")
	}
}

func TestReadCallArgs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "{}", `  {"a":1} `: `{"a":1}`} {
		got, err := ReadCallArgs(in, nil)
		if err != nil || string(got) != want {
			t.Errorf("ReadCallArgs(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	got, err := ReadCallArgs("-", strings.NewReader("{\"b\": [1]}\n"))
	if err != nil || string(got) != `{"b": [1]}` {
		t.Errorf("from stdin: %s, %v", got, err)
	}
	for _, bad := range []string{"[1]", "null", "3", "{", "nope"} {
		if _, err := ReadCallArgs(bad, nil); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
			t.Errorf("ReadCallArgs(%q): err = %v", bad, err)
		}
	}
}

func TestWriteResult(t *testing.T) {
	t.Parallel()
	res := &sdk.CallToolResult{
		Content: []sdk.Content{
			&sdk.TextContent{Text: "hello\n"},
			&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
			&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 3)},
			&sdk.ResourceLink{URI: "file:///r.txt", Name: "r", MIMEType: "text/plain"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://t", MIMEType: "text/plain", Text: "inside"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", Blob: []byte{1, 2}}},
		},
		StructuredContent: map[string]any{"n": 1},
	}
	var b strings.Builder
	mcpWriteResult(&b, res)
	want := `hello
[image: image/png, 10 bytes]
[audio: audio/wav, 3 bytes]
[resource link: r, file:///r.txt, text/plain]
[resource: mem://t, text/plain]
inside
[resource: mem://b, 2 bytes]
{
  "n": 1
}
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	// structuredContent already given as text is not printed twice.
	b.Reset()
	mcpWriteResult(&b, &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"n": 1}`}}, StructuredContent: map[string]any{"n": 1}})
	if b.String() != "{\"n\": 1}\n" {
		t.Errorf("duplicate structured content: %q", b.String())
	}
}

// A connected OAuth server shows when its token expires; two servers whose
// names give the same tool prefix (my.srv, my_srv) are counted with only
// the tools actually offered, and the dropped one is named.
func TestPrintServerListTokensAndCollisions(t *testing.T) {
	t.Parallel()
	now := time.Now()
	statuses := []servers.Status{
		{Name: "remote", Transport: "http", State: servers.StateConnected, Tools: 3, TokenExpiry: now.Add(52*time.Minute + 30*time.Second)},
		{Name: "soon", Transport: "http", State: servers.StateConnected, Tools: 1, TokenExpiry: now.Add(20 * time.Second)},
		{Name: "my.srv", Transport: "stdio", State: servers.StateConnected, Tools: 2},
		{Name: "my_srv", Transport: "stdio", State: servers.StateConnected, Tools: 2, NotOffered: []tool.Collision{{Name: "mcp__my_srv__echo",
			Kept:    tool.Info{Server: "my.srv", Name: "echo"},
			Dropped: tool.Info{Server: "my_srv", Name: "echo"}}}},
	}
	var b strings.Builder
	if err := printServerList(&b, statuses, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"token expires in 52m",
		"token expires in <1m",
		"1 tool(s) not offered (echo): same qualified name as a tool of my.srv",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "my_srv" && f[3] != "1" {
			t.Errorf("my_srv counted %s tools, want 1 (one of its two is not offered):\n%s", f[3], out)
		}
	}
	b.Reset()
	printServerList(&b, statuses, true)
	if !strings.Contains(b.String(), `"not_offered": [`) {
		t.Errorf("JSON lacks not_offered:\n%s", b.String())
	}
}

func TestPrintServerList(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	statuses := []servers.Status{
		{Name: "gh", Transport: "http", State: servers.StateNeedsAuth, Error: "login required", TokenExpiry: exp},
		{Name: "fs", Transport: "stdio", State: servers.StateConnected, Tools: 12},
		{Name: "db", Transport: "stdio", State: servers.StateFailed, Error: "exited with status 1\nmore detail"},
	}
	var b strings.Builder
	if err := printServerList(&b, statuses, false); err != nil {
		t.Fatal(err)
	}
	want := `NAME  TRANSPORT  STATE       TOOLS  ERROR
gh    http       needs-auth  0      login required; token expired 2026-01-02T03:04:05Z
fs    stdio      connected   12     -
db    stdio      failed      0      exited with status 1 …
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := printServerList(&b, statuses[:2], true); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(b.String()), &rows); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rows) != "[map[error:login required name:gh state:needs-auth token_expiry:2026-01-02T03:04:05Z tools:0 transport:http] map[error: name:fs state:connected tools:12 transport:stdio]]" {
		t.Errorf("JSON rows: %v", rows)
	}
}

// Server states read as sentences.
func TestServerStateText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		st   servers.Status
		want string
	}{
		{servers.Status{Name: "db", State: servers.StateFailed, Error: "exited with status 1"}, "MCP server db failed: exited with status 1"},
		{servers.Status{Name: "gh", State: servers.StateNeedsAuth, Error: "authorization required: the refresh token was revoked"},
			"MCP server gh needs a login: the refresh token was revoked; run `otter mcp login gh` (or, in the TUI, select it in /mcp and press l)"},
		{servers.Status{Name: "gh", State: servers.StateNeedsAuth, Error: "authorization required"},
			"MCP server gh needs a login; run `otter mcp login gh` (or, in the TUI, select it in /mcp and press l)"},
		{servers.Status{Name: "x", State: servers.StateDisabled, Error: "enabled = false in a.toml"}, "MCP server x is disabled: enabled = false in a.toml"},
		{servers.Status{Name: "p", State: servers.StatePending}, "MCP server p has not finished starting"},
	} {
		if got := serverStateText(tc.st.Name, tc.st, nil); got != tc.want {
			t.Errorf("serverStateText(%s) = %q, want %q", tc.st.State, got, tc.want)
		}
	}
}

// The login's expiry line says "in <1m" for a token about to expire, not
// "in 0s", and hours with their minutes.
func TestExpiryText(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		exp  time.Time
		want string
	}{
		{time.Time{}, "The token does not expire."},
		{now.Add(20 * time.Second), "(in <1m); otter refreshes it"},
		{now.Add(52*time.Minute + 30*time.Second), "(in 52m)"},
		{now.Add(61*time.Minute + 30*time.Second), "(in 1h01m)"},
	} {
		if got := expiryText(tc.exp); !strings.Contains(got, tc.want) {
			t.Errorf("expiryText(now%+v) = %q, want it to contain %q", tc.exp.Sub(now).Round(time.Second), got, tc.want)
		}
	}
}

// Parallel tool calls finish in any order; the json output lists them in
// the order the model made them.
func TestPromptJSONKeepsTheModelsCallOrder(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	p := &promptPrinter{format: FormatJSON, stdout: &stdout, stderr: io.Discard, start: time.Now()}
	p.event(agent.ToolCallStarted{ID: "call_0", Name: "slow", Args: json.RawMessage(`{"n":0}`)})
	p.event(agent.ToolCallStarted{ID: "call_1", Name: "fast", Args: json.RawMessage(`{"n":1}`)})
	p.event(agent.ToolCallFinished{ID: "call_1", Name: "fast", Result: &tool.Result{}, Elapsed: time.Millisecond})
	p.event(agent.ToolCallFinished{ID: "call_0", Name: "slow", Err: errors.New("boom"), Elapsed: time.Second})
	p.result(nil)
	var res struct {
		ToolCalls []promptToolCall `json:"tool_calls"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	got := res.ToolCalls
	if len(got) != 2 || got[0].ID != "call_0" || got[1].ID != "call_1" ||
		string(got[0].Args) != `{"n":0}` || !got[0].IsError || got[0].Error != "boom" || got[0].DurationMS != 1000 ||
		got[1].IsError || got[1].DurationMS != 1 {
		t.Errorf("tool_calls = %+v, want call_0 (failed, 1s) then call_1", got)
	}
}
