package mcphost

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
)

// A call the server refuses with -32042 fails with an error that names the
// URLs and the server's words; each http(s) URL is first put to the
// person through the eliciter, as an elicitation/create in url mode would be.
func TestURLElicitationRequired(t *testing.T) {
	srv := newTestServer("normal")
	srv.AddPrompt(&sdk.Prompt{Name: "needs_url"},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return nil, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{
				{Mode: "url", Message: "Connect your account", URL: "https://example.com/connect?x=1", ElicitationID: "el-3"},
			})
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	el := &eliciter{reply: ask.ElicitReply{Action: ask.Accept}}
	h := newHarness(t, configOf(remote("web", "http", ts.URL), stdioServer(t, "local", "normal")), servers.Options{Eliciter: el})
	h.m.Start(context.Background())
	h.waitState("web", servers.StateConnected)
	h.waitState("local", servers.StateConnected)

	for _, server := range []string{"web", "local"} {
		el.got = nil
		_, err := h.call(context.Background(), server, "needs_url", `{}`)
		want := "mcp__" + server + "__needs_url: the server needs you to open https://example.com/connect?x=1 (Connect your account) in a browser, then call again"
		if err == nil || err.Error() != want {
			t.Errorf("%s: error\n got %v\nwant %s", server, err, want)
		}
		var ue *servers.URLElicitationError
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &ue) || ue.Server != server || len(ue.Elicitations) != 1 || ue.Elicitations[0].ID != "el-2" {
			t.Errorf("%s: not a URLElicitationError: %#v", server, err)
		}
		if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
			t.Errorf("%s: the JSON-RPC error is not kept: %v", server, err)
		}
		wantAsk := ask.Elicitation{Server: server, Message: "Connect your account", Mode: "url", URL: "https://example.com/connect?x=1", ID: "el-2"}
		if len(el.got) != 1 || fmt.Sprint(el.got[0]) != fmt.Sprint(wantAsk) {
			t.Errorf("%s: asked %+v, want %+v", server, el.got, wantAsk)
		}
	}

	// Several URLs: escape sequences go whole (not just their ESC), a URL no browser should be
	// handed is named but not offered, the server's message is quoted.
	el.got = nil
	_, err := h.call(context.Background(), "web", "needs_urls", `{}`)
	want := "mcp__web__needs_urls: the server needs you to open https://login.example.com/start (Sign in now) and javascript:alert(1) (Not for a browser) in a browser, then call again; it said: Sign in first."
	if err == nil || err.Error() != want {
		t.Errorf("needs_urls: error\n got %v\nwant %s", err, want)
	}
	if len(el.got) != 1 || el.got[0].URL != "https://login.example.com/start" {
		t.Errorf("needs_urls: asked %+v", el.got)
	}

	// A prompt, too.
	_, err = h.m.GetPrompt(context.Background(), "web", "needs_url", nil)
	want = `prompt "needs_url" of MCP server "web": the server needs you to open https://example.com/connect?x=1 (Connect your account) in a browser, then try again`
	if err == nil || err.Error() != want {
		t.Errorf("prompt: error\n got %v\nwant %s", err, want)
	}
}

// Without an eliciter (the client does not offer elicitation) the error
// still names the URL.
func TestURLElicitationRequiredWithoutEliciter(t *testing.T) {
	h := newHarness(t, configOf(stdioServer(t, "local", "normal")), servers.Options{})
	h.m.Start(context.Background())
	h.waitState("local", servers.StateConnected)
	_, err := h.call(context.Background(), "local", "needs_url", `{}`)
	if err == nil || !strings.Contains(err.Error(), "open https://example.com/connect?x=1 (Connect your account) in a browser") {
		t.Errorf("error = %v", err)
	}
}

// The reference server's trigger-url-elicitation with errorPath answers
// -32042 with a prerequisite URL.
func TestReferenceServerURLElicitationError(t *testing.T) {
	node, index := everything(t)
	srv := config.Server{Name: "everything", Command: node, Args: []string{index, "stdio"}, StartupTimeout: dur(liveness)}
	el := &eliciter{reply: ask.ElicitReply{Action: ask.Decline}}
	h := newHarness(t, configOf(srv), servers.Options{Eliciter: el})
	h.m.Start(context.Background())
	h.wait("everything", "trigger-url-elicitation", func(servers.Status) bool {
		_, ok := h.set.Lookup("mcp__everything__trigger-url-elicitation")
		return ok
	})
	_, err := h.call(context.Background(), "everything", "trigger-url-elicitation", `{"url":"https://example.com/x","errorPath":true}`)
	want := "mcp__everything__trigger-url-elicitation: the server needs you to open https://modelcontextprotocol.io " +
		"(Open this link to satisfy the prerequisite, then retry the request.) in a browser, then call again; " +
		"it said: This request requires browser-based authorization."
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
	if len(el.got) != 1 || el.got[0].Mode != "url" || el.got[0].URL != "https://modelcontextprotocol.io" {
		t.Errorf("asked %+v", el.got)
	}
}
