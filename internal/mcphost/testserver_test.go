package mcphost

// The test binary doubles as the stdio MCP servers the tests start: with
// OTTER_TEST_SERVER=<mode> in its environment, TestMain runs that server on
// stdin/stdout instead of the tests.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/testpeer"
)

const (
	envMode    = "OTTER_TEST_SERVER"
	envPidFile = "OTTER_TEST_PIDFILE" // the server appends its pid (and its children's)
	envMark    = "OTTER_TEST_MARK"    // the slow tool writes "cancelled" here when its call is cancelled
	envDelay   = "OTTER_TEST_DELAY"   // delay before serving (e.g. "300ms")
	envExitIf  = "OTTER_TEST_EXIT_IF" // behave as mode "exit" when this file exists
	// envEchoDesc, when set, is added to the echo tool's description and
	// to the instructions.
	envEchoDesc = "OTTER_TEST_ECHO_DESC"
	// envSeen names a file the server appends a line to for each tools/call
	// ("call") and each notifications/cancelled ("cancelled") that arrives
	// on its stdin; with it set, the server ignores SIGTERM and SIGPIPE and
	// exits at the end of its stdin, so that it sees everything the client
	// wrote before closing it. (The SDK may stop reading earlier, once its
	// connection fails; and the end of stdin ends the server's calls too:
	// only the notification shows the client cancelled them.)
	envSeen = "OTTER_TEST_SEEN"
	// envTools is how many tools mode "many" lists besides its usual ones
	// (2,000 unless set).
	envTools = "OTTER_TEST_TOOLS"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		// The sandbox's launcher, as otter's binary runs it (cmd/otter):
		// the tests that confine a server give this binary as the launcher.
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(runTestServer(mode))
	}
	os.Exit(m.Run())
}

func recordPid(pid int) {
	path := os.Getenv(envPidFile)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintln(f, pid)
	f.Close()
}

func runTestServer(mode string) int {
	recordPid(os.Getpid())
	ctx := context.Background()
	if path := os.Getenv(envExitIf); path != "" {
		if _, err := os.Stat(path); err == nil {
			mode = "exit"
		}
	}
	switch mode {
	case "netprobe": // sandboxnet_test.go
		return runNetProbe()
	case "netfail": // sandboxnet_test.go
		return runNetFail()
	case "exit":
		fmt.Fprintln(os.Stderr, "starting up")
		if v := os.Getenv("OTTER_TEST_ECHO"); v != "" {
			fmt.Fprintln(os.Stderr, "using token", v) // a server that echoes a secret otter passed it
		}
		fmt.Fprintln(os.Stderr, "fatal: MY_API_KEY is not set")
		return 3
	case "cat": // the pipe floor of the benchmark: echo lines back
		io.Copy(os.Stdout, os.Stdin)
		return 0
	case "noinit":
		time.Sleep(time.Hour) // reads nothing, answers nothing
		return 0
	case "noisy":
		fmt.Println("Server starting on stdio...")
		fmt.Println("  version 1.2.3")
		fmt.Println("{not json") // looks like a message, is not one
		fmt.Println("[stray")
	case "flood":
		go func() {
			line := strings.Repeat("x", 200) + "\n"
			for i := 0; ; i++ {
				fmt.Fprintf(os.Stderr, "flood %d %s", i, line)
			}
		}()
	case "grandchild":
		cmd := exec.Command("sh", "-c", "sleep 1000")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		recordPid(cmd.Process.Pid)
	}
	if d, err := time.ParseDuration(os.Getenv(envDelay)); err == nil {
		time.Sleep(d) // slow to start: initialize waits
	}
	srv := newTestServer(mode)
	var t sdk.Transport = &sdk.StdioTransport{MaxLineLength: -1}
	if path := os.Getenv(envSeen); path != "" {
		// SIGPIPE too: a reply written after otter closed its end must not
		// end the server before it has read what otter wrote.
		signal.Ignore(syscall.SIGTERM, syscall.SIGPIPE)
		in, done := seenStdin(func(what string) {
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintln(f, what)
				f.Close()
			}
		})
		defer func() {
			in.Close()
			<-done
		}()
		t = &sdk.IOTransport{Reader: in, Writer: os.Stdout, MaxLineLength: -1}
	}
	if err := srv.Run(ctx, t); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

// seenStdin gives the server what arrives on stdin through the returned
// reader and reports each tools/call ("call") and notifications/cancelled
// ("cancelled") among it, up to the end of stdin: also what arrives after
// the server stopped reading. Closing the reader lets the rest pass
// unread; done is closed at the end of stdin.
func seenStdin(seen func(what string)) (r io.ReadCloser, done <-chan struct{}) {
	pr, pw := io.Pipe()
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		defer pw.Close()
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 64<<20)
		forward := true
		for sc.Scan() {
			var msg struct{ Method string }
			if json.Unmarshal(sc.Bytes(), &msg) == nil {
				switch msg.Method {
				case "tools/call":
					seen("call")
				case "notifications/cancelled":
					seen("cancelled")
				}
			}
			if forward {
				_, err := pw.Write(append(sc.Bytes(), '\n'))
				forward = err == nil
			}
		}
	}()
	return pr, ch
}

func objectSchema(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	if props == nil {
		props = map[string]*jsonschema.Schema{}
	}
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func args(req *sdk.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

// slowCancelled counts cancelled slow calls of in-process servers.
var slowCancelled atomic.Int64

// newTestServer builds the MCP server of a mode; the stdio modes and the
// in-process HTTP and SSE tests share it.
func newTestServer(mode string) *sdk.Server {
	instructions, echoDesc := "Use echo to echo.", "Echo text back."
	if v := os.Getenv(envEchoDesc); v != "" { // a server whose tool changes between runs (pins_test.go)
		instructions, echoDesc = "Use echo to echo. "+v, "Echo text back. "+v
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "otter-test-" + mode, Version: "1.0.0"},
		&sdk.ServerOptions{Instructions: instructions, PageSize: 500})
	if !strings.HasPrefix(mode, "modern") {
		// Speak the 2025-11-25 protocol, as most servers do today: refuse the
		// 2026-07-28 server/discover probe, so the client falls back to
		// initialize, and server-to-client requests within a call work.
		srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "server/discover" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
				}
				return next(ctx, method, req)
			}
		})
	}
	str := &jsonschema.Schema{Type: "string"}
	num := &jsonschema.Schema{Type: "number"}
	srv.AddTool(&sdk.Tool{Name: "echo", Description: echoDesc, InputSchema: objectSchema(map[string]*jsonschema.Schema{"text": str}, "text")},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if mode == "noisy" {
				fmt.Println("debug: echo called") // a stray print between messages
			}
			return text(fmt.Sprint(args(req)["text"])), nil
		})
	srv.AddTool(&sdk.Tool{Name: "add", InputSchema: objectSchema(map[string]*jsonschema.Schema{"a": num, "b": num}, "a", "b")},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a := args(req)
			return text(strconv.FormatFloat(a["a"].(float64)+a["b"].(float64), 'f', -1, 64)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "progress", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			if tok == nil {
				return text("no progress token"), nil
			}
			for i := 1; i <= 3; i++ {
				req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
			// A round trip to the client after the notifications: the client
			// handles incoming messages in order, so they have been handled
			// once it answers. It also shows the roots the client offers.
			roots, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range roots.Roots {
				uris = append(uris, r.URI)
			}
			return text(strings.Join(uris, " ")), nil
		})
	srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if mark := os.Getenv(envMark); mark != "" {
				os.WriteFile(mark, []byte("started"), 0o600)
			}
			<-ctx.Done()
			slowCancelled.Add(1)
			if mark := os.Getenv(envMark); mark != "" {
				os.WriteFile(mark, []byte("cancelled"), 0o600)
			}
			return nil, ctx.Err()
		})
	srv.AddTool(&sdk.Tool{Name: "elicit", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{
				Message: "Who are you?",
				RequestedSchema: objectSchema(map[string]*jsonschema.Schema{
					"name":  {Type: "string", Default: json.RawMessage(`"otter"`)},
					"count": {Type: "integer", Default: json.RawMessage(`3`)},
					"flag":  {Type: "boolean", Default: json.RawMessage(`true`)},
					"note":  {Type: "string"},
				}),
			})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res.Content)
			return text(res.Action + " " + string(b)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "elicit_url", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{
				Mode: "url", Message: "Connect your account", URL: "https://example.com/connect?x=1", ElicitationID: "el-1",
			})
			if err != nil {
				return nil, err
			}
			return text(res.Action), nil
		})
	// needs_url and needs_urls refuse the call until URLs are opened
	// (-32042, the error path of URL elicitation).
	srv.AddTool(&sdk.Tool{Name: "needs_url", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{
				{Mode: "url", Message: "Connect your account", URL: "https://example.com/connect?x=1", ElicitationID: "el-2"},
			})
		})
	srv.AddTool(&sdk.Tool{Name: "needs_urls", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, &jsonrpc.Error{
				Code:    sdk.CodeURLElicitationRequired,
				Message: "MCP error -32042: Sign in first.",
				Data: json.RawMessage(`{"elicitations":[` +
					`{"mode":"url","elicitationId":"a","url":"https://login.example.com/start","message":"Sign in\n\u001b[31mnow\u001b[0m"},` +
					`{"mode":"url","elicitationId":"b","url":"javascript:alert(1)","message":"Not for a browser"}]}`),
			}
		})
	srv.AddTool(&sdk.Tool{Name: "sample", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{
				MaxTokens: 10,
				Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}},
			})
			if err != nil {
				return nil, err
			}
			return text(res.Content.(*sdk.TextContent).Text), nil
		})
	srv.AddTool(&sdk.Tool{Name: "log", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			msg := "disk almost full"
			if v := os.Getenv("OTTER_TEST_ECHO"); v != "" {
				msg += " (token " + v + ")" // a server that logs a secret otter passed it
			}
			req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "test", Data: msg})
			req.Session.ListRoots(ctx, nil) // see the progress tool
			return text("logged"), nil
		})
	srv.AddTool(&sdk.Tool{Name: "add_tool", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			srv.AddTool(&sdk.Tool{Name: "extra", InputSchema: objectSchema(nil)},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("extra"), nil })
			srv.AddPrompt(&sdk.Prompt{Name: "extra"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				return &sdk.GetPromptResult{}, nil
			})
			srv.AddResource(&sdk.Resource{URI: "test://extra", Name: "extra"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{}, nil
			})
			return text("added"), nil
		})
	// die exits mid-call: with status 7 after one stderr line, or with the
	// given status after the given stderr lines.
	srv.AddTool(&sdk.Tool{Name: "die", InputSchema: objectSchema(map[string]*jsonschema.Schema{
		"status": {Type: "integer"},
		"stderr": {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	})},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct {
				Status *int
				Stderr []string
			}
			_ = json.Unmarshal(req.Params.Arguments, &a)
			if a.Status == nil {
				fmt.Fprintln(os.Stderr, "crashing on purpose")
				os.Exit(7)
			}
			for _, l := range a.Stderr {
				fmt.Fprintln(os.Stderr, l)
			}
			os.Exit(*a.Status)
			return nil, nil
		})
	srv.AddTool(&sdk.Tool{Name: "hang", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {} // ignores cancellation
		})
	srv.AddTool(&sdk.Tool{Name: "big", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(strings.Repeat("0123456789", 5<<20)), nil // 50 MiB
		})
	if os.Getenv(envMode) != "" { // only in a server process: it stops itself
		srv.AddTool(&sdk.Tool{Name: "freeze", InputSchema: objectSchema(nil)},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				syscall.Kill(os.Getpid(), syscall.SIGSTOP) // answers nothing, pings included
				return text("thawed"), nil
			})
	}
	if mode == "many" {
		n := 2000
		if v, err := strconv.Atoi(os.Getenv(envTools)); err == nil {
			n = v
		}
		for _, name := range testpeer.AwkwardToolNames(n) {
			srv.AddTool(&sdk.Tool{Name: name, Description: "awkward", InputSchema: objectSchema(nil)},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text(name), nil })
		}
		// Two names that normalise alike (mcp__many__a_b).
		for _, name := range []string{"a.b", "a/b"} {
			srv.AddTool(&sdk.Tool{Name: name, Description: "awkward", InputSchema: objectSchema(nil)},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text(name), nil })
		}
	}
	srv.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Say hello", Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Hello, " + req.Params.Arguments["who"]}}}}, nil
		})
	srv.AddResource(&sdk.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/plain"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}}, nil
		})
	return srv
}
