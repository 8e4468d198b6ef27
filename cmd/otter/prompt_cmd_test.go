package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// otterWithStdin runs the otter command line in-process with stdin.
func otterWithStdin(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, out, errOut := testRoot(stdin)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// testRoot is the otter command line over streams that are no terminal:
// stdin reads from stdin, stdout and stderr are collected.
func testRoot(stdin io.Reader) (root *cobra.Command, stdout, stderr *bytes.Buffer) {
	streams, _, stdout, stderr := iostreams.Test()
	streams.In = stdin
	return newRootCmd(&cli.Factory{IO: streams, Version: version}), stdout, stderr
}

// promptConfig writes a config file naming the fake model server as the
// provider, plus extra TOML.
func promptConfig(t *testing.T, srv *llmtest.Server, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "otter.toml")
	cfg := fmt.Sprintf(`
[agent]
provider = "fake"
model = "fake-model"

[providers.fake]
type = %q
base_url = %q
api_key = "test-key"
%s`, string(srv.Kind), srv.URL, extra)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPromptAnswersWithAnMCPTool is the "done when": with a
// provider configured, `otter -p` answers a question that needs a tool of
// an MCP server (the reference server), for both provider types.
func TestPromptAnswersWithAnMCPTool(t *testing.T) {
	peers := testpeer.Require(t)
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			configTestHome(t)
			getSum := toolname.Qualified("everything", "get-sum")
			srv := llmtest.New(t, kind,
				llmtest.Reply{Calls: []llmtest.Call{{ID: "call_sum", Name: getSum, Args: `{"a":2,"b":3}`}}},
				llmtest.Reply{Text: []string{"2 + 3 = ", "5."}},
			)
			// A hosted model's window: the server's tools fit the budget
			// and are offered whole (smaller windows defer them).
			cfg := promptConfig(t, srv, "context_window = 200000\n"+peers.EverythingConfig())
			stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-p", "What is 2+3?")
			if err != nil {
				t.Fatalf("otter -p: %v\nstderr:\n%s", err, stderr)
			}
			if stdout != "2 + 3 = 5.\n" {
				t.Errorf("stdout = %q, want only the final answer", stdout)
			}
			if !strings.Contains(stderr, "→ "+getSum) || !strings.Contains(stderr, "✓ "+getSum) {
				t.Errorf("stderr does not show the tool activity:\n%s", stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model server got %d requests, want 2", len(reqs))
			}
			if !slices.Contains(reqs[0].Tools, getSum) || !slices.Contains(reqs[0].Tools, "scrape_page") {
				t.Errorf("offered tools %v lack %s or the built-ins", reqs[0].Tools, getSum)
			}
			if reqs[0].Messages[0].Text != "What is 2+3?" || reqs[0].Model != "fake-model" {
				t.Errorf("first request: model %q messages %+v", reqs[0].Model, reqs[0].Messages)
			}
			res := reqs[1].LastToolResults()
			if len(res) != 1 || res[0].CallID != "call_sum" || res[0].IsError || !strings.Contains(res[0].Text, "5") {
				t.Errorf("tool result sent to the model = %+v", res)
			}
		})
	}
}

func TestPromptOutputFormats(t *testing.T) {
	configTestHome(t)
	t.Run("json, prompt from stdin", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Hello ", "there"}, InputTokens: 7, OutputTokens: 2})
		cfg := promptConfig(t, srv, "")
		stdout, stderr, err := otterWithStdin(t, strings.NewReader("say hello\n"), "--config", cfg, "-p", "-", "--output-format", "json", "--model", "other-model")
		if err != nil {
			t.Fatalf("otter -p: %v\n%s", err, stderr)
		}
		var res struct {
			Type, Result, Model string
			IsError             bool `json:"is_error"`
			Usage               struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			}
			ToolCalls []any `json:"tool_calls"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
		}
		if res.Type != "result" || res.Result != "Hello there" || res.IsError || res.Model != "other-model" || res.Usage.InputTokens != 7 || res.ToolCalls == nil {
			t.Errorf("result = %+v", res)
		}
		if r := srv.Requests(); len(r) != 1 || r[0].Messages[0].Text != "say hello" || r[0].Model != "other-model" {
			t.Errorf("request = %+v", r)
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Anthropic,
			llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "list_presets", Args: `{}`}}},
			llmtest.Reply{Text: []string{"A", "B"}},
		)
		cfg := promptConfig(t, srv, "")
		stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-p", "presets?", "--output-format", "stream-json")
		if err != nil {
			t.Fatalf("otter -p: %v\n%s", err, stderr)
		}
		var types []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var ev struct{ Type, Text, Name, ID string }
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("line %q is not JSON: %v", line, err)
			}
			types = append(types, ev.Type)
		}
		want := []string{"tool_call", "tool_result", "text", "text", "result"}
		if !slices.Equal(types, want) {
			t.Errorf("event types = %v, want %v\n%s", types, want, stdout)
		}
		if res := srv.Requests()[1].LastToolResults(); len(res) != 1 || res[0].CallID != "c1" || res[0].IsError {
			t.Errorf("list_presets result = %+v", res)
		}
	})
}

// On a terminal -p shows the answer's Markdown as the TUI does (no "## ",
// bullets); piped, the answer is as the model wrote it, for a script.
func TestPromptRendersMarkdownOnATerminal(t *testing.T) {
	configTestHome(t)
	answer := "## Result\n\n- one\n- two\n"
	for _, tty := range []bool{true, false} {
		srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{answer}})
		cfg := promptConfig(t, srv, "")
		streams, _, stdout, stderr := iostreams.Test()
		streams.In = strings.NewReader("")
		streams.SetStdoutTTY(tty)
		root := newRootCmd(&cli.Factory{IO: streams, Version: version})
		root.SetArgs([]string{"--config", cfg, "-p", "results?"})
		if err := root.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("otter -p: %v\n%s", err, stderr)
		}
		got := ansi.Strip(stdout.String())
		if tty {
			if strings.Contains(got, "##") || !strings.Contains(got, "  Result\n") || !strings.Contains(got, "  • one\n  • two") {
				t.Errorf("on a terminal, stdout = %q", got)
			}
		} else if got != answer {
			t.Errorf("piped, stdout = %q, want the answer as written", got)
		}
	}
}

func TestPromptFailures(t *testing.T) {
	configTestHome(t)
	t.Run("no provider", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "")
		t.Setenv("OPENAI_API_KEY", "")
		_, _, err := otterWithStdin(t, strings.NewReader(""), "-p", "hi")
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), "[providers.") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
			t.Errorf("error does not explain how to configure a provider: %v", err)
		}
	})
	t.Run("no provider, json", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "")
		t.Setenv("OPENAI_API_KEY", "")
		stdout, _, err := otterWithStdin(t, strings.NewReader(""), "-p", "hi", "--output-format", "json")
		wantExit(t, err, 2)
		var res struct {
			Type    string `json:"type"`
			IsError bool   `json:"is_error"`
			Error   string `json:"error"`
		}
		if json.Unmarshal([]byte(stdout), &res) != nil || res.Type != "result" || !res.IsError || !strings.Contains(res.Error, "ANTHROPIC_API_KEY") {
			t.Errorf("stdout = %q, want one result object that says how to configure a provider", stdout)
		}
	})
	t.Run("-p without a value", func(t *testing.T) {
		_, _, err := otterWithStdin(t, strings.NewReader("hi"), "-p")
		wantExit(t, err, 2)
		if err == nil || !strings.Contains(err.Error(), "otter -p -") {
			t.Errorf("err = %v, want it to say how to pipe the prompt in", err)
		}
	})
	t.Run("-p followed by a flag", func(t *testing.T) {
		_, _, err := otterWithStdin(t, strings.NewReader(""), "-p", "--output-format", "json", "hi")
		wantExit(t, err, 2)
		if err == nil || !strings.Contains(err.Error(), "-p takes the prompt as its value") {
			t.Errorf("err = %v, want it to say -p took the flag as its prompt", err)
		}
	})
	t.Run("space-separated list flag", func(t *testing.T) {
		_, _, err := otterWithStdin(t, strings.NewReader(""), "-p", "hi", "--allow-tools", "a", "b")
		wantExit(t, err, 2)
		if err == nil || !strings.Contains(err.Error(), `unexpected argument "b"`) || !strings.Contains(err.Error(), "--allow-tools a,b") {
			t.Errorf("err = %v, want it to name the stray argument and show the list syntax", err)
		}
	})
	t.Run("empty prompt", func(t *testing.T) {
		_, _, err := otterWithStdin(t, strings.NewReader("  \n"), "-p", "")
		wantExit(t, err, 2)
	})
	t.Run("bad api key", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Status: 401, Message: "invalid x-api-key"})
		stdout, _, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "hi")
		wantExit(t, err, 2)
		if !strings.Contains(err.Error(), "authentication failed") || stdout != "" {
			t.Errorf("err = %v, stdout = %q", err, stdout)
		}
	})
	t.Run("overloaded provider is retried, and says so", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Anthropic,
			llmtest.Reply{Status: 529, Message: "Overloaded", Header: map[string]string{"Retry-After": "0"}},
			llmtest.Reply{StreamError: "overloaded_error"},
			llmtest.Reply{Text: []string{"Hello."}},
		)
		stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "hi")
		if err != nil || stdout != "Hello.\n" {
			t.Fatalf("otter -p: %v, stdout %q\n%s", err, stdout, stderr)
		}
		if strings.Count(stderr, "retrying") != 2 || !strings.Contains(stderr, "529") || !strings.Contains(stderr, "overloaded_error") {
			t.Errorf("stderr should announce both retries (HTTP 529, then overloaded_error in the stream):\n%s", stderr)
		}
	})
	t.Run("max turns", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.OpenAI,
			llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "list_presets", Args: `{}`}}},
		)
		_, _, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "loop", "--max-turns", "1")
		wantExit(t, err, 1)
		if !strings.Contains(err.Error(), "max_turns") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("stream cut mid-answer", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"Otters are ", "mustel", "ids."}, CutAfter: 2})
		stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "otters?")
		wantExit(t, err, 2)
		if stdout != "Otters are mustel\n" || !strings.Contains(stderr, "the answer is partial") {
			t.Errorf("a cut answer is printed without saying it is partial: stdout %q stderr:\n%s", stdout, stderr)
		}
		srv = llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Otters are ", "mustel", "ids."}, CutAfter: 2})
		stdout, _, err = otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "otters?", "--output-format", "json")
		wantExit(t, err, 2)
		var res struct {
			Result  string `json:"result"`
			IsError bool   `json:"is_error"`
			Partial bool   `json:"partial"`
		}
		if json.Unmarshal([]byte(stdout), &res) != nil || res.Result != "Otters are mustel" || !res.IsError || !res.Partial {
			t.Errorf("json result = %s, want the partial text marked partial", stdout)
		}
	})
	t.Run("answer cut at the output limit", func(t *testing.T) {
		for _, kind := range llmtest.Kinds {
			srv := llmtest.New(t, kind, llmtest.Reply{Text: []string{"Otters are ", "mustel"}, AtLimit: true})
			stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "otters?", "--output-format", "json")
			if err != nil {
				t.Fatalf("%s: otter -p: %v\n%s", kind, err, stderr)
			}
			var res struct {
				Result    string `json:"result"`
				Truncated bool   `json:"truncated"`
			}
			if json.Unmarshal([]byte(stdout), &res) != nil || res.Result != "Otters are mustel" || !res.Truncated || !strings.Contains(stderr, "max_tokens") {
				t.Errorf("%s: stdout %s stderr %q; want the text marked truncated, and how to get more", kind, stdout, stderr)
			}
		}
	})
	t.Run("--dangerously-allow-all lets it run", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Anthropic,
			llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "export_data", Args: `{"records":[{"a":1}],"format":"json","filename":"out.json"}`}}},
			llmtest.Reply{Text: []string{"Exported."}},
		)
		stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "export", "--dangerously-allow-all")
		if err != nil || stdout != "Exported.\n" {
			t.Fatalf("otter -p: %v, stdout %q\n%s", err, stdout, stderr)
		}
		res := srv.Requests()[1].LastToolResults()
		if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "out.json") {
			t.Errorf("result sent to the model = %+v, want the export's path", res)
		}
		if _, err := os.Stat(filepath.Join(os.Getenv("XDG_DATA_HOME"), "otter", "exports", "out.json")); err != nil {
			t.Errorf("the export was not written: %v", err)
		}
	})
	t.Run("tool needing permission is denied headless", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.OpenAI,
			llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "export_data", Args: `{}`}}},
			llmtest.Reply{Text: []string{"I could not export."}},
		)
		stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, ""), "-p", "export")
		if err != nil {
			t.Fatalf("otter -p: %v\n%s", err, stderr)
		}
		if stdout != "I could not export.\n" || !strings.Contains(stderr, "--allow-tools export_data") {
			t.Errorf("stdout %q stderr:\n%s", stdout, stderr)
		}
		res := srv.Requests()[1].LastToolResults()
		if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Text, "--allow-tools") {
			t.Errorf("result sent to the model = %+v", res)
		}
	})
}

// TestPromptInterrupted: Ctrl-C mid-answer exits 1 and says once, on
// stderr, that the answer is partial.
func TestPromptInterrupted(t *testing.T) {
	configTestHome(t)
	hold := make(chan struct{})
	defer close(hold)
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Otters ", "are"}, Hold: hold})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, _, errOut := testRoot(strings.NewReader(""))
	root.SetArgs([]string{"--config", promptConfig(t, srv, ""), "-p", "otters?"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	for len(srv.Requests()) == 0 { // the model is answering
		select {
		case err := <-done:
			t.Fatalf("otter -p ended before the model answered: %v\n%s", err, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel() // what Ctrl-C does through main's signal context
	err := <-done
	wantExit(t, err, 1)
	if err.Error() != "" || !strings.Contains(errOut.String(), "interrupted; the answer is partial") {
		t.Errorf("err %q (main prints it after stderr), stderr:\n%s\nwant only the interruption notice", err, errOut.String())
	}
}

// TestPromptSampling: the reference server's sampling tool gets an answer
// from the configured model only with --allow-sampling.
func TestPromptSampling(t *testing.T) {
	configTestHome(t)
	trigger := toolname.Qualified("everything", "trigger-sampling-request")
	servers := testpeer.Require(t).EverythingConfig()
	call := llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: trigger, Args: `{"prompt":"name a river","maxTokens":50}`}}}

	for _, kind := range llmtest.Kinds {
		t.Run(string(kind)+" allowed", func(t *testing.T) {
			srv := llmtest.New(t, kind, call,
				llmtest.Reply{Text: []string{"the Rhine"}}, // the server's sampling request
				llmtest.Reply{Text: []string{"The server's model chose the Rhine."}},
			)
			stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, servers),
				"-p", "ask the server", "--allow-tools", "mcp__everything__trigger-*", "--allow-sampling")
			if err != nil {
				t.Fatalf("otter -p: %v\n%s", err, stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("model server got %d requests, want 3\nstderr:\n%s", len(reqs), stderr)
			}
			if s := reqs[1]; s.System != "You are a helpful test server." || len(s.Messages) != 1 || !strings.Contains(s.Messages[0].Text, "name a river") || s.MaxTokens != 50 {
				t.Errorf("sampling request: system %q messages %+v max_tokens %d", s.System, s.Messages, s.MaxTokens)
			}
			if res := reqs[2].LastToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "the Rhine") {
				t.Errorf("tool result = %+v", res)
			}
			if stdout != "The server's model chose the Rhine.\n" {
				t.Errorf("stdout = %q", stdout)
			}
		})
		t.Run(string(kind)+" declined", func(t *testing.T) {
			srv := llmtest.New(t, kind, call, llmtest.Reply{Text: []string{"It was declined."}})
			_, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", promptConfig(t, srv, servers),
				"-p", "ask the server", "--allow-tools", trigger)
			if err != nil {
				t.Fatalf("otter -p: %v\n%s", err, stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model server got %d requests, want 2 (no sampling call)", len(reqs))
			}
			if res := reqs[1].LastToolResults(); len(res) != 1 || !res[0].IsError {
				t.Errorf("tool result = %+v, want the server's error", res)
			}
			if !strings.Contains(stderr, "declined a sampling request from everything") {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}

// TestMCPCommandsPinWhatTheAgentIsOffered: a server that lists a tool only
// to a client that can sample (the reference server's
// trigger-sampling-request) lists it to `otter mcp …` too, so the pins
// `otter mcp list` takes are the tools the agent is offered: the tool is
// not held back from `otter -p` afterwards (it was, as a "new" tool that
// `otter mcp diff` and `approve` then could not see, since they did not
// see it either). Calling it from `otter mcp call` is refused with why.
func TestMCPCommandsPinWhatTheAgentIsOffered(t *testing.T) {
	configTestHome(t)
	trigger := toolname.Qualified("everything", "trigger-sampling-request")
	srv := llmtest.New(t, llmtest.OpenAI,
		llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: trigger, Args: `{"prompt":"name a river","maxTokens":20}`}}},
		llmtest.Reply{Text: []string{"It was declined."}})
	cfg := promptConfig(t, srv, testpeer.Require(t).EverythingConfig())

	if out, errOut, err := runOtter(t, "--config", cfg, "mcp", "list"); err != nil || !strings.Contains(out, "connected") {
		t.Fatalf("otter mcp list: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := runOtter(t, "--config", cfg, "mcp", "tools", "everything"); err != nil || !strings.Contains(out, "trigger-sampling-request") {
		t.Errorf("otter mcp tools everything does not list trigger-sampling-request: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := runOtter(t, "--config", cfg, "mcp", "diff", "everything"); !strings.Contains(out+errOut+fmt.Sprint(err), "nothing is held back") {
		t.Errorf("otter mcp diff everything (%v):\n%s%s", err, out, errOut)
	}
	_, errOut, err := runOtter(t, "--config", cfg, "-p", "ask the server", "--allow-tools", trigger)
	if err != nil {
		t.Fatalf("otter -p: %v\n%s", err, errOut)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2\n%s", len(reqs), errOut)
	}
	// The call reached the server, which asked to sample: declined, as -p
	// declines without --allow-sampling — not refused as held back.
	if res := reqs[1].LastToolResults(); len(res) != 1 || strings.Contains(res[0].Text, "held back") || !strings.Contains(errOut, "declined a sampling request from everything") {
		t.Errorf("tool result = %+v, stderr:\n%s\nwant the call to reach the server", res, errOut)
	}
	out, errOut, err := runOtter(t, "--config", cfg, "mcp", "call", "everything", "trigger-sampling-request", `{"prompt":"name a river","maxTokens":20}`)
	if want := "otter mcp commands ask no model"; !strings.Contains(out+errOut+fmt.Sprint(err), want) {
		t.Errorf("otter mcp call trigger-sampling-request (%v) does not say %q:\n%s%s", err, want, out, errOut)
	}
}
