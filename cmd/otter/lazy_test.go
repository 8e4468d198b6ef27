package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"
)

// lazyHome is a temporary home whose user config names the model server
// srv and n copies of the reference everything server (s01, s02, …) under
// Node, each with env OTTER_LAZY_MARK=<marker>-sNN so that its processes
// can be counted (otter passes a server no variable of its own). It
// returns the otter binary's command in that home.
func lazyHome(t testing.TB, srv *llmtest.Server, n int, marker string) testpeer.Cmd {
	t.Helper()
	peers := testpeer.Require(t)
	home := t.TempDir()
	cfgDir := filepath.Join(home, ".config", "otter")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if srv != nil {
		fmt.Fprintf(&b, "[agent]\nprovider = \"fake\"\nmodel = \"fake-model\"\n\n[providers.fake]\ntype = %q\nbase_url = %q\napi_key = \"test-key\"\n\n",
			string(srv.Kind), srv.URL)
	}
	b.WriteString(peers.EverythingCopies(n, "OTTER_LAZY_MARK", marker))
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return testpeer.Cmd{Path: testpeer.Otter(t), Dir: home, Env: testpeer.HomeEnv(home)}
}

// runningServers counts, by server, the processes of the n servers of
// lazyHome that run now.
func runningServers(t testing.TB, n int, marker string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := 1; i <= n; i++ {
		pids, err := testpeer.MarkedProcesses("OTTER_LAZY_MARK=" + marker + "-" + testpeer.CopyName(i))
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) > 0 {
			out[testpeer.CopyName(i)] = len(pids)
		}
	}
	return out
}

// TestTwelveServersStartWhenNeeded is issue 39's "done when" through the
// real binary: with 12 stdio servers (the reference server under Node) in
// a temporary home, one `otter mcp list` starts and pins them all; then
// `otter mcp list --json` shows each idle with its known tools, `otter -p
// hi` answers while none of them runs (counted while the model is asked),
// and a model's call of one server's tool starts that server alone, whose
// result reaches the model.
func TestTwelveServersStartWhenNeeded(t *testing.T) {
	const n = 12
	marker := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	echo := toolname.Qualified("s07", "echo")
	// The model: counts the servers running each time it is asked.
	var mu sync.Mutex
	var seen []map[string]int
	taken := func() []map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	srv := llmtest.New(t, llmtest.OpenAI)
	srv.Respond = func(req llmtest.Request) llmtest.Reply {
		running := runningServers(t, n, marker)
		mu.Lock()
		seen = append(seen, running)
		mu.Unlock()
		switch {
		case strings.Contains(req.Messages[len(req.Messages)-1].Text, "echo lazy"):
			return llmtest.Reply{Calls: []llmtest.Call{{ID: "call_echo", Name: echo, Args: `{"message":"lazy"}`}}}
		case len(req.LastToolResults()) > 0:
			return llmtest.Reply{Text: []string{"It said: " + req.LastToolResults()[0].Text}}
		}
		return llmtest.Reply{Text: []string{"Hello."}}
	}
	otter := lazyHome(t, srv, n, marker)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	if r := otter.Run(t, ctx, "mcp", "list"); r.Code != 0 || strings.Count(r.Stdout, " connected ") != n {
		t.Fatalf("the first otter mcp list: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := otter.Run(t, ctx, "mcp", "list", "--json")
	var rows []struct {
		Name, State string
		Tools       int
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rows); err != nil || r.Code != 0 || len(rows) != n {
		t.Fatalf("otter mcp list --json: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	for _, row := range rows {
		if row.State != "idle" || row.Tools < 10 {
			t.Errorf("mcp list --json after the first run: %+v, want idle with its known tools", row)
		}
	}

	r = otter.Run(t, ctx, "-p", "hi")
	if r.Code != 0 || r.Stdout != "Hello.\n" {
		t.Fatalf("otter -p hi: exit %d, stdout %q\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if seen := taken(); len(seen) != 1 || len(seen[0]) != 0 {
		t.Errorf("servers running while the model answered hi: %v, want none", seen)
	}
	if strings.Contains(r.Stderr, "waiting for MCP servers") {
		t.Errorf("otter -p waited for idle servers:\n%s", r.Stderr)
	}

	r = otter.Run(t, ctx, "-p", "echo lazy")
	if r.Code != 0 || !strings.Contains(r.Stdout, "It said: Echo: lazy") {
		t.Fatalf("otter -p with a call of %s: exit %d, stdout %q\n%s", echo, r.Code, r.Stdout, r.Stderr)
	}
	if seen := taken(); len(seen) != 2 || len(seen[0]) != 0 || len(seen[1]) != 1 || seen[1]["s07"] != 1 {
		t.Errorf("servers running at each model request: %v; want none, then s07 alone", seen)
	}
	if left := runningServers(t, n, marker); len(left) != 0 {
		t.Errorf("server processes left after otter exited: %v", left)
	}
}
