package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/servers"
)

// The resource tools are offered while a connected server has resources,
// and the front end hears of the server only once they are.
func TestResourceToolsFollowServersWithResources(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	s.AddResource(&sdk.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "docs://readme", MIMEType: "text/plain", Text: "hello"}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)

	offered := func(a *App) bool {
		_, list := a.tools.Lookup(attach.ListToolName)
		_, read := a.tools.Lookup(attach.ReadToolName)
		return list && read
	}
	var a *App
	seen := make(chan bool, 16)
	paths := testPaths(t, serverTOML("docs", ts.URL))
	a, err := New(context.Background(), Options{Parts: testParts, Paths: paths, WorkDir: t.TempDir(), OnEvent: func(e servers.Event) {
		if sc, ok := e.(servers.StateChanged); ok && sc.Status.State == servers.StateConnected {
			seen <- offered(a)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if offered(a) {
		t.Fatal("resource tools offered before any server connected")
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	a.Start(ctx)
	if err := a.mcp.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if !<-seen {
		t.Error("the front end heard of the connected server before the resource tools were offered")
	}
	if err := a.mcp.SetEnabled(ctx, "docs", false); err != nil {
		t.Fatal(err)
	}
	if offered(a) {
		t.Error("resource tools still offered with the only server disabled")
	}
}
