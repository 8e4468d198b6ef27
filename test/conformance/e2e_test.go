package conformance

// End-to-end checks of `otter mcp list|tools|call` as a user runs them: the
// real binary, a config.toml in fresh XDG directories, and the official
// reference server (@modelcontextprotocol/server-everything) over stdio,
// streamable HTTP and SSE.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/testpeer"
)

// e2eTimeout bounds one otter command: generous, for liveness only.
const e2eTimeout = 2 * time.Minute

// e2eHome is an isolated environment with a config.toml holding servers.
type e2eHome struct {
	env    []string
	marker string // an argument every stdio server of this test carries
}

// newE2EHome writes config (TOML) into the user config of fresh XDG dirs.
// In config, {node}, {everything} and {marker} are replaced by the Node 22
// binary, the reference server's entry point and a unique marker.
func newE2EHome(t *testing.T, config string) *e2eHome {
	t.Helper()
	requirePeers(t)
	h := &e2eHome{env: isolatedEnv(t), marker: fmt.Sprintf("otter-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	config = strings.NewReplacer("{node}", strconv.Quote(nodeBin), "{everything}", strconv.Quote(everythingJS),
		"{marker}", strconv.Quote(h.marker)).Replace(config)
	var dir string
	for _, kv := range h.env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			dir = filepath.Join(v, "otter")
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.assertNoServerLeft(t) })
	return h
}

func (h *e2eHome) otter(t *testing.T, stdin string, args ...string) testpeer.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	r := runOtter(t, ctx, h.env, stdin, args...)
	h.assertNoServerLeft(t)
	return r
}

// assertNoServerLeft fails if a server process started for this test
// outlived the otter command that started it.
func (h *e2eHome) assertNoServerLeft(t *testing.T) {
	t.Helper()
	// otter has exited; its children get the grace period of a SIGTERM.
	var pids []int
	for range 50 {
		if pids = processesWith(h.marker); len(pids) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("server processes outlived otter: %v", pids)
}

// processesWith lists the processes whose command line contains s.
func processesWith(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

const everythingConfig = `
[[mcp.servers]]
name = "everything"
command = {node}
args = [{everything}, "stdio", {marker}]

[[mcp.servers]]
name = "broken"
command = "/bin/sh"
args = ["-c", "echo 'cannot open the database' >&2; exit 3", {marker}]
`

type listRow struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	Error     string `json:"error"`
}

func TestE2EList(t *testing.T) {
	h := newE2EHome(t, everythingConfig)

	// broken fails: exit 1, so that a script can tell, with the list.
	r := h.otter(t, "", "mcp", "list", "--json")
	if r.Code != 1 || !strings.Contains(r.Stderr, "broken (failed)") {
		t.Fatalf("otter mcp list --json exited %d, want 1 naming broken:\n%s", r.Code, r.Stderr)
	}
	var rows []listRow
	if err := json.Unmarshal([]byte(r.Stdout), &rows); err != nil {
		t.Fatalf("otter mcp list --json printed no JSON array (%v):\n%s", err, r.Stdout)
	}
	got := map[string]listRow{}
	for _, row := range rows {
		got[row.Name] = row
	}
	if ev := got["everything"]; ev.State != "connected" || ev.Transport != "stdio" || ev.Tools < 10 || ev.Error != "" {
		t.Errorf("everything: got %+v, want connected over stdio with its tools", ev)
	}
	if br := got["broken"]; br.State != "failed" || !strings.Contains(br.Error, "3") {
		t.Errorf("broken: got %+v, want failed with a reason naming its exit status 3", br)
	}
	// list counts the tools that tools lists (the reference server offers
	// its elicitation tools only to clients that can answer them).
	r = h.otter(t, "", "mcp", "tools", "everything", "--json")
	var tools []json.RawMessage
	if err := json.Unmarshal([]byte(r.Stdout), &tools); r.Code != 0 || err != nil {
		t.Fatalf("otter mcp tools everything --json: exit %d, %v:\n%s", r.Code, err, r.Stderr)
	}
	if ev := got["everything"]; ev.Tools != len(tools) {
		t.Errorf("otter mcp list counts %d tools of everything, otter mcp tools lists %d", ev.Tools, len(tools))
	}

	r = h.otter(t, "", "mcp", "list")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.Code != 1 || len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME TRANSPORT STATE TOOLS ERROR" {
		t.Fatalf("otter mcp list: exit %d, want 1 (broken failed) and a header and two rows:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		switch f[0] {
		case "everything":
			// Its tools are known now (pinned by the listing above) and
			// deferred, so it waits idle until they are needed (lazy
			// start), listed with the tools it is known to have.
			if f[2] != "idle" || f[3] != strconv.Itoa(got["everything"].Tools) {
				t.Errorf("row %q: want everything idle with its %d known tools", l, got["everything"].Tools)
			}
		case "broken":
			if f[2] != "failed" {
				t.Errorf("row %q: want broken failed", l)
			}
		default:
			t.Errorf("unexpected row %q", l)
		}
	}
}

func TestE2ECall(t *testing.T) {
	h := newE2EHome(t, everythingConfig)

	r := h.otter(t, "", "mcp", "call", "everything", "get-sum", `{"a":2,"b":3}`)
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "The sum of 2 and 3 is 5." {
		t.Fatalf("call get-sum: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}

	t.Run("qualified name and stdin", func(t *testing.T) {
		r := h.otter(t, `{"message":"hello from stdin"}`, "mcp", "call", "mcp__everything__echo", "-")
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != "Echo: hello from stdin" {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("raw JSON result", func(t *testing.T) {
		r := h.otter(t, "", "mcp", "call", "--json", "everything", "get-sum", `{"a":20,"b":22}`)
		var res sdk.CallToolResult
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 {
			t.Fatalf("exit %d, stdout not a CallToolResult (%v):\n%s", r.Code, err, r.Stdout)
		}
		if len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "The sum of 20 and 22 is 42." || res.IsError {
			t.Errorf("got %s", r.Stdout)
		}
	})

	t.Run("summarised content", func(t *testing.T) {
		r := h.otter(t, "", "mcp", "call", "everything", "get-tiny-image")
		if r.Code != 0 || !strings.Contains(r.Stdout, "[image: image/png, ") {
			t.Errorf("exit %d, want the image summarised, got:\n%s", r.Code, r.Stdout)
		}
	})

	t.Run("structured content", func(t *testing.T) {
		r := h.otter(t, "", "mcp", "call", "everything", "get-structured-content", `{"location":"Chicago"}`)
		var v map[string]any
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &v) != nil || v["temperature"] == nil {
			t.Errorf("exit %d, want the structured weather as JSON, got:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("isError exits 1", func(t *testing.T) {
		// The server fetches the URL; nothing listens on port 1.
		r := h.otter(t, "", "mcp", "call", "everything", "gzip-file-as-resource",
			`{"name":"x.gz","data":"http://127.0.0.1:1/nothing"}`)
		if r.Code != 1 || !strings.Contains(r.Stderr, "fetch failed") || r.Stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 with the tool's error on stderr", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("invalid arguments exit 2: the tool never ran", func(t *testing.T) {
		r := h.otter(t, "", "mcp", "call", "everything", "get-sum", `{"a":"two"}`)
		if r.Code != 2 || !strings.Contains(r.Stderr, `a: want number, got string`) || !strings.Contains(r.Stderr, "b: missing") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming every bad argument", r.Code, r.Stderr)
		}
	})

	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"unknown server", []string{"nope", "get-sum"}, `no MCP server named "nope"`},
		{"unknown tool", []string{"everything", "get-product"}, `has no tool "get-product"`},
		{"unknown built-in", []string{"frobnicate"}, `no tool named "frobnicate"`},
		{"arguments not an object", []string{"everything", "get-sum", "[1,2]"}, "JSON_ARGS must be a JSON object"},
		{"broken server", []string{"broken", "anything"}, "cannot open the database"},
		{"too many arguments", []string{"a", "b", "{}", "d"}, "accepts between 1 and 3 arg(s)"},
		{"bad elicit policy", []string{"--elicit", "sometimes", "everything", "echo"}, "unknown elicitation policy"},
	} {
		t.Run("exit 2 "+tc.name, func(t *testing.T) {
			r := h.otter(t, "", append([]string{"mcp", "call"}, tc.args...)...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q on stderr", r.Code, r.Stdout, r.Stderr, tc.want)
			}
		})
	}
}

func TestE2ETools(t *testing.T) {
	h := newE2EHome(t, everythingConfig)

	r := h.otter(t, "", "mcp", "tools", "everything", "--json")
	if r.Code != 0 {
		t.Fatalf("exit %d:\n%s", r.Code, r.Stderr)
	}
	var tools []struct {
		Name        string          `json:"name"`
		Server      string          `json:"server"`
		Tool        string          `json:"tool"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
		Annotations json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &tools); err != nil {
		t.Fatalf("not a JSON array (%v):\n%s", err, r.Stdout)
	}
	found := false
	for _, tl := range tools {
		if tl.Server != "everything" {
			t.Errorf("tools everything listed %s of server %q", tl.Name, tl.Server)
		}
		if tl.Tool == "get-sum" {
			found = true
			var schema struct {
				Properties map[string]any `json:"properties"`
			}
			_ = json.Unmarshal(tl.InputSchema, &schema)
			if tl.Name != "mcp__everything__get-sum" || tl.Description == "" || schema.Properties["a"] == nil || schema.Properties["b"] == nil {
				t.Errorf("get-sum: got %+v", tl)
			}
		}
	}
	if !found {
		t.Errorf("get-sum missing from:\n%s", r.Stdout)
	}

	// Without SERVER: the built-ins first, then every connected server's
	// tools; the failed server is reported on stderr.
	r = h.otter(t, "", "mcp", "tools")
	if r.Code != 0 {
		t.Fatalf("exit %d:\n%s", r.Code, r.Stderr)
	}
	scrape := strings.Index(r.Stdout, "scrape_page  (built-in)")
	sum := strings.Index(r.Stdout, "mcp__everything__get-sum  (server everything, tool get-sum)")
	if scrape < 0 || sum < 0 || scrape > sum || !strings.Contains(r.Stdout, "arguments: a (number, required), b (number, required)") {
		t.Errorf("want built-ins then server tools with their arguments, got:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "broken failed") {
		t.Errorf("the failed server is not reported on stderr:\n%s", r.Stderr)
	}
}

func TestE2EElicitationPolicies(t *testing.T) {
	h := newE2EHome(t, everythingConfig)
	for policy, want := range map[string]string{"decline": `"action": "decline"`, "cancel": `"action": "cancel"`} {
		r := h.otter(t, "", "mcp", "call", "--elicit", policy, "everything", "trigger-elicitation-request")
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("--elicit %s: exit %d, stdout:\n%s\nstderr:\n%s", policy, r.Code, r.Stdout, r.Stderr)
		}
	}
	// Without a terminal the default is decline.
	r := h.otter(t, "", "mcp", "call", "everything", "trigger-elicitation-request")
	if !strings.Contains(r.Stdout, `"action": "decline"`) {
		t.Errorf("default policy without a terminal: stdout:\n%s", r.Stdout)
	}
}

func TestE2ETimeout(t *testing.T) {
	h := newE2EHome(t, everythingConfig)
	r := h.otter(t, "", "mcp", "call", "--timeout", "2s", "everything", "trigger-long-running-operation", `{"duration":600,"steps":2}`)
	if r.Code != 2 || !strings.Contains(r.Stderr, "--timeout 2s") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming the timeout", r.Code, r.Stderr)
	}
}

// startEverything runs the reference server over HTTP (mode streamableHttp
// or sse) on a free local port and returns its base URL.
func startEverything(t *testing.T, mode string) string {
	t.Helper()
	requirePeers(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, nodeBin, everythingJS, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.WaitDelay = 10 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	ready := make(chan struct{})
	exited := make(chan string, 1)
	go func() {
		var log strings.Builder
		listening := false
		sc := bufio.NewScanner(stderr) // drained until the server exits
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !listening && strings.Contains(sc.Text(), strconv.Itoa(port)) {
				listening = true
				close(ready)
			}
		}
		exited <- log.String()
	}()
	select {
	case <-ready:
	case log := <-exited:
		t.Fatalf("server-everything %s exited before listening on port %d:\n%s", mode, port, log)
	case <-time.After(time.Minute):
		t.Fatalf("server-everything %s did not start on port %d within a minute", mode, port)
	}
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

func TestE2EAdHoc(t *testing.T) {
	h := newE2EHome(t, "") // no servers configured
	httpURL := startEverything(t, "streamableHttp") + "/mcp"
	sseURL := startEverything(t, "sse") + "/sse"

	for _, tc := range []struct{ name, flag, url string }{
		{"streamable HTTP", "--url", httpURL},
		{"SSE", "--sse", sseURL},
		{"--url falls back to SSE", "--url", sseURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.otter(t, "", "mcp", "call", tc.flag, tc.url, "get-sum", `{"a":2,"b":3}`)
			if r.Code != 0 || strings.TrimSpace(r.Stdout) != "The sum of 2 and 3 is 5." {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
		})
	}

	t.Run("tools --url", func(t *testing.T) {
		r := h.otter(t, "", "mcp", "tools", "--json", "--url", httpURL)
		var tools []struct{ Name, Server, Tool string }
		if err := json.Unmarshal([]byte(r.Stdout), &tools); err != nil || r.Code != 0 {
			t.Fatalf("exit %d (%v):\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Tool)
			if tl.Server != "127.0.0.1" {
				t.Errorf("%s: server %q, want the ad hoc server only", tl.Name, tl.Server)
			}
		}
		if !strings.Contains(strings.Join(names, " "), "get-sum") {
			t.Errorf("get-sum missing: %v", names)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		cmdline := fmt.Sprintf("%s %s stdio %s", strconv.Quote(nodeBin), strconv.Quote(everythingJS), h.marker)
		r := h.otter(t, "", "mcp", "call", "--stdio", cmdline, "echo", `{"message":"ad hoc"}`)
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != "Echo: ad hoc" {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		r := h.otter(t, "", "mcp", "tools", "--url", "http://127.0.0.1:1/mcp")
		if r.Code != 2 || !strings.Contains(r.Stderr, "127.0.0.1") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming the server", r.Code, r.Stderr)
		}
	})

	t.Run("usage", func(t *testing.T) {
		r := h.otter(t, "", "mcp", "tools", "--url", httpURL, "--sse", sseURL)
		if r.Code != 2 || !strings.Contains(r.Stderr, "give only one ad hoc server") {
			t.Errorf("exit %d, stderr:\n%s", r.Code, r.Stderr)
		}
	})
}

func TestE2EConfigError(t *testing.T) {
	// A missing variable in a server fails that server alone: it is listed
	// failed with the reason, and a call to it exits 2 with the reason.
	h := newE2EHome(t, "[[mcp.servers]]\nname = \"x\"\ncommand = \"${OTTER_E2E_UNSET_VARIABLE}\"\n")
	reason := func(s string) bool {
		return strings.Contains(s, "config.toml:3") && strings.Contains(s, "OTTER_E2E_UNSET_VARIABLE is not set")
	}
	if r := h.otter(t, "", "mcp", "list"); r.Code != 1 || !strings.Contains(r.Stdout, "x     stdio      failed") || !reason(r.Stdout) {
		t.Errorf("otter mcp list: exit %d, stdout %q, stderr:\n%s\nwant exit 1 listing x failed with config.toml:3 and the variable", r.Code, r.Stdout, r.Stderr)
	}
	if r := h.otter(t, "", "mcp", "call", "x", "y"); r.Code != 2 || !reason(r.Stderr) || r.Stdout != "" {
		t.Errorf("otter mcp call x y: exit %d, stdout %q, stderr:\n%s\nwant exit 2 naming config.toml:3 and the variable", r.Code, r.Stdout, r.Stderr)
	}

	// A broken file is still an error for every command.
	h = newE2EHome(t, "[[mcp.servers]]\nname = \"x\"\ncommand = \"a\"\nargs = [\n")
	for _, args := range [][]string{{"mcp", "list"}, {"mcp", "tools"}, {"mcp", "call", "x", "y"}} {
		r := h.otter(t, "", args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "config.toml:") || r.Stdout != "" {
			t.Errorf("otter %v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 naming config.toml and the line", args, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestE2EElicitAsk answers a form on stdin as a person would: the server
// asks, otter shows each field with its default and reads the answers.
func TestE2EElicitAsk(t *testing.T) {
	h := newE2EHome(t, everythingConfig)
	// accept; name (required, so asked first); then Enter for every other
	// field: its default, or left out when there is none.
	answers := "a\nOtto\n" + strings.Repeat("\n", 20)
	r := h.otter(t, answers, "mcp", "call", "--elicit", "ask", "everything", "trigger-elicitation-request")
	if r.Code != 0 {
		t.Fatalf("exit %d:\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{"- Name: Otto", "- Favorite Integer: 42", `"untitledMultipleSelectEnum": [`, `"firstLine": "It was a dark and stormy night."`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the result lacks %q:\n%s", want, r.Stdout)
		}
	}
	// The questions go to stderr, never stdout.
	for _, want := range []string{"Please provide inputs for the following fields", "Integer (integer) [42]"} {
		if !strings.Contains(r.Stderr, want) || strings.Contains(r.Stdout, want) {
			t.Errorf("%q should be asked on stderr only;\nstderr:\n%s", want, r.Stderr)
		}
	}
}

// Ctrl-C while `otter mcp list` waits for a slow stdio server stops the
// server's whole process group: the server and a grandchild (as npx and uvx
// start), both of which shrug off SIGTERM.
func TestE2EInterruptStopsServers(t *testing.T) {
	// $0 of sh -c is the marker, passed on to the grandchild.
	h := newE2EHome(t, `
[[mcp.servers]]
name = "slow"
command = "/bin/sh"
args = ["-c", 'sh -c "trap : TERM; while :; do sleep 1; done" "$0" & trap : TERM; echo starting >&2; while :; do sleep 1; done', {marker}]
startup_timeout = "10m"
`)
	var stderr strings.Builder
	cmd := exec.Command(otterBin, "mcp", "list")
	cmd.Env, cmd.Stderr = h.env, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(e2eTimeout)
	for len(processesWith(h.marker)) < 2 { // the server and its grandchild
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the slow server did not start; otter's stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("interrupted otter mcp list exited 0, want a failure")
		}
	case <-time.After(e2eTimeout):
		cmd.Process.Kill()
		t.Fatalf("otter mcp list did not stop on Ctrl-C; stderr:\n%s", stderr.String())
	}
	// newE2EHome's cleanup fails the test if either process is left.
}
