package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/session"
	"github.com/otter-sh/otter/internal/testpeer"
	"github.com/otter-sh/otter/internal/toolname"
)

// TestPromptContinuesTheSavedConversation is a script's multi-turn
// conversation: otter -p, then otter -c -p, -r ID --fork-session, and the
// sessions commands over what was saved.
func TestPromptContinuesTheSavedConversation(t *testing.T) {
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			paths := configTestHome(t)
			srv := llmtest.New(t, kind,
				llmtest.Reply{Text: []string{"Otters hold hands ", "while they sleep."}},
				llmtest.Reply{Text: []string{"So they do not drift apart."}},
				llmtest.Reply{Text: []string{"A fork."}},
			)
			cfg := promptConfig(t, srv, "")
			stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-p", "Tell me about otters", "--output-format", "json")
			if err != nil {
				t.Fatalf("first: %v\n%s", err, stderr)
			}
			var res struct {
				SessionID string `json:"session_id"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.SessionID == "" {
				t.Fatalf("json result without session_id: %s (%v)", stdout, err)
			}
			if fi, err := os.Stat(filepath.Join(paths.DataDir, record.FileName)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("the database: %v %v", fi, err)
			}

			stdout, stderr, err = otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-c", "-p", "and then?")
			if err != nil || stdout != "So they do not drift apart.\n" || !strings.Contains(stderr, "otter: Continuing session "+res.SessionID[:8]+" (Tell me about otters, 2 messages, last ") {
				t.Fatalf("-c: %v\nstdout %q\nstderr %s", err, stdout, stderr)
			}
			if m := srv.Requests()[1].Messages; len(m) != 3 || m[0].Text != "Tell me about otters" || m[1].Text != "Otters hold hands while they sleep." || m[2].Text != "and then?" {
				t.Errorf("-c did not send the saved conversation: %+v", m)
			}

			_, stderr, err = otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-r", res.SessionID[:6], "--fork-session", "-p", "branch")
			if err != nil || !strings.Contains(stderr, "otter: forked: you now continue ") || !strings.Contains(stderr, "a copy of "+res.SessionID[:8]) {
				t.Fatalf("--fork-session: %v\n%s", err, stderr)
			}

			stdout, _, err = otterWithStdin(t, nil, "sessions", "list", "--json")
			var list []struct {
				ID       string `json:"id"`
				Title    string `json:"title"`
				Cwd      string `json:"cwd"`
				Messages int    `json:"messages"`
				Model    string `json:"model"`
			}
			if err != nil || json.Unmarshal([]byte(stdout), &list) != nil || len(list) != 2 {
				t.Fatalf("sessions list --json: %v\n%s", err, stdout)
			}
			orig := list[1]
			if orig.ID != res.SessionID || orig.Messages != 4 || orig.Title != "Tell me about otters" || orig.Model != "fake-model" || list[0].Messages != 6 {
				t.Errorf("listed: %+v", list)
			}

			stdout, _, err = otterWithStdin(t, nil, "sessions", "show", res.SessionID[:8], "--json")
			var show struct {
				ID       string `json:"id"`
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err != nil || json.Unmarshal([]byte(stdout), &show) != nil || len(show.Messages) != 4 || show.Messages[3].Content != "So they do not drift apart." {
				t.Errorf("sessions show --json: %v\n%s", err, stdout)
			}
			stdout, _, err = otterWithStdin(t, nil, "sessions", "export", res.SessionID)
			if err != nil || !strings.Contains(stdout, "# Tell me about otters") || !strings.Contains(stdout, "## You\n\nand then?") {
				t.Errorf("sessions export: %v\n%s", err, stdout)
			}
			stdout, _, err = otterWithStdin(t, nil, "sessions", "search", "drift")
			if err != nil || strings.Count(stdout, "«drift»") != 2 {
				t.Errorf("sessions search: %v\n%s", err, stdout)
			}

			_, _, err = otterWithStdin(t, nil, "sessions", "show", "zzzz")
			wantExit(t, err, 2)
			_, _, err = otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-r", "zzzz", "-p", "x")
			wantExit(t, err, 2)
			_, _, err = otterWithStdin(t, nil, "sessions", "rm", list[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = otterWithStdin(t, nil, "sessions", "show", list[0].ID)
			wantExit(t, err, 2)

			// --no-session saves nothing.
			srv.Push(llmtest.Reply{Text: []string{"unsaved"}})
			if _, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--no-session", "-p", "secret"); err != nil {
				t.Fatalf("--no-session: %v\n%s", err, stderr)
			}
			stdout, _, _ = otterWithStdin(t, nil, "sessions", "search", "secret", "--json")
			if strings.TrimSpace(stdout) != "[]" {
				t.Errorf("--no-session saved the prompt: %s", stdout)
			}
		})
	}
}

// envSessionServer makes the test binary a stdio MCP server with a fast
// tool (add) and one that never returns (hang).
const envSessionServer = "OTTER_SESSIONTEST_SERVER"

func runSessionTestServer() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1"}, nil)
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s, &sdk.Tool{Name: "add", Annotations: ro}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Annotations: ro}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	return 0
}

// TestKillNineKeepsWhatWasStreamed kills the real otter binary with
// SIGKILL twice — while a tool call is in flight (after another call of the
// same answer finished), and while an answer streams — and continues the
// conversation with otter -c -p each time: everything saved before the
// kill is sent, the streamed part of the answer included, and both
// providers' wire protocols accept the history (every tool call answered).
func TestKillNineKeepsWhatWasStreamed(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			work := filepath.Join(home, "project")
			os.MkdirAll(work, 0o755)
			add, hang := toolname.Qualified("slow", "add"), toolname.Qualified("slow", "hang")
			hold := make(chan struct{})
			defer close(hold)
			srv := llmtest.New(t, kind,
				llmtest.Reply{Text: []string{"Let me check."}, Calls: []llmtest.Call{
					{ID: "call_add", Name: add, Args: `{"a":2,"b":3}`},
					{ID: "call_hang", Name: hang, Args: `{}`},
				}},
			)
			cfg := promptConfig(t, srv, fmt.Sprintf("[[mcp.servers]]\nname = \"slow\"\ncommand = %q\nenv = { %s = \"1\" }\n", self, envSessionServer))
			env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
				"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
			otter := func(args ...string) *exec.Cmd {
				cmd := exec.Command(bin, append([]string{"--config", cfg, "--allow-tools", "mcp__slow__*"}, args...)...)
				cmd.Dir, cmd.Env = work, env
				return cmd
			}
			dbPath := filepath.Join(home, "data", "otter", record.FileName)
			saved := func() []record.Entry {
				s, err := session.Open(context.Background(), dbPath)
				if err != nil {
					return nil
				}
				defer s.Close()
				l, _ := s.List(context.Background(), record.ListOptions{})
				if len(l) == 0 {
					return nil
				}
				e, _ := s.Entries(context.Background(), l[0].ID, 0)
				return e
			}
			killWhen := func(cmd *exec.Cmd, ready func() bool) {
				t.Helper()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(time.Minute)
				for !ready() {
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						t.Fatal("otter never reached the moment to kill it")
					}
					time.Sleep(20 * time.Millisecond)
				}
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
			}

			// 1. A tool call in flight: add's result is saved, hang runs.
			killWhen(otter("-p", "add 2 and 3"), func() bool {
				e := saved()
				return len(e) == 3 && e[2].Message.Role == "tool"
			})
			srv.Push(llmtest.Reply{Text: []string{"The sum is 5."}})
			if out, err := otter("-c", "-p", "what happened?").CombinedOutput(); err != nil {
				t.Fatalf("otter -c after kill -9: %v\n%s", err, out)
			}
			r := srv.Requests()[1]
			if len(r.Messages) != 4 || r.Messages[0].Text != "add 2 and 3" || r.Messages[1].Text != "Let me check." || len(r.Messages[1].ToolCalls) != 2 || r.Messages[3].Text != "what happened?" {
				t.Fatalf("resumed request: %+v", r.Messages)
			}
			if res := r.Messages[2].ToolResults; len(res) != 2 || res[0].Text != "5" || res[1].CallID != "call_hang" || !res[1].IsError || !strings.Contains(res[1].Text, "interrupted") {
				t.Errorf("tool results after kill -9: %+v", res)
			}

			// 2. An answer streaming: what streamed is saved as it comes,
			// so the partial answer survives the kill, and the model is
			// told that otter's exit cut it off.
			srv.Push(llmtest.Reply{Text: []string{"Otters are ", "mustelids."}, Hold: hold})
			killWhen(otter("-c", "-p", "tell me more"), func() bool {
				e := saved()
				return len(e) > 0 && e[len(e)-1].Message.Role == "assistant" && e[len(e)-1].Message.Text == "Otters are "
			})
			if e := saved(); !e[len(e)-1].Message.Interrupted {
				t.Errorf("the answer cut off by kill -9 is not stored as interrupted: %+v", e[len(e)-1].Message)
			}
			srv.Push(llmtest.Reply{Text: []string{"Again: mustelids."}})
			if out, err := otter("-c", "-p", "again please").CombinedOutput(); err != nil {
				t.Fatalf("otter -c after the second kill -9: %v\n%s", err, out)
			}
			r = srv.Requests()[3]
			var roles []string
			for _, m := range r.Messages {
				roles = append(roles, m.Role+":"+m.Text)
			}
			got := strings.Join(roles, "|")
			want := "user:add 2 and 3|assistant:Let me check.|tool:|user:what happened?|assistant:The sum is 5.|user:tell me more|" +
				"assistant:Otters are \n\n[the answer was cut off here by otter's exit]|user:again please"
			if got != want {
				t.Errorf("after the second kill the model got:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// `otter sessions export ID --json` prints what `show --json` prints, for
// a script that archives conversations; without --json, Markdown.
func TestSessionsExportJSON(t *testing.T) {
	bin := testpeer.Otter(t)
	home, env := otterHome(t)
	ctx := context.Background()
	s, err := session.Open(ctx, filepath.Join(home, "xdg_data_home", "otter", record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Create(ctx, record.Info{Cwd: home, Provider: "fake", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []llm.Message{{Role: llm.RoleUser, Text: "where do otters sleep?"}, {Role: llm.RoleAssistant, Text: "In the water, holding hands."}} {
		if _, err := s.Append(ctx, info.ID, m, llm.Usage{}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	export := func(args ...string) string {
		cmd := exec.Command(bin, append([]string{"sessions", "export", info.ID[:8]}, args...)...)
		cmd.Dir, cmd.Env = home, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("otter sessions export %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var got struct {
		ID       string `json:"id"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	out := export("--json")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("export --json is not JSON: %v\n%s", err, out)
	}
	if got.ID != info.ID || len(got.Messages) != 2 || got.Messages[1].Role != "assistant" || got.Messages[1].Content != "In the water, holding hands." {
		t.Errorf("export --json = %+v", got)
	}
	if md := export(); !strings.Contains(md, "In the water, holding hands.") || strings.HasPrefix(strings.TrimSpace(md), "{") {
		t.Errorf("export without --json is not Markdown:\n%s", md)
	}
}

// TestADamagedSessionDatabaseIsNotWrittenInto: with four 4 KiB pages in
// the middle of otter.db overwritten, `otter -p` says the conversation is
// not saved and how to save what the file holds, and leaves the file byte
// for byte as it was; resuming is refused; `otter sessions list` still
// reads it (read-only). (Before, -p said it "leaves it unchanged and saves
// nothing" yet committed a new row, and resuming wrote new messages into
// the file.)
func TestADamagedSessionDatabaseIsNotWrittenInto(t *testing.T) {
	paths := configTestHome(t)
	work := t.TempDir()
	big := strings.Repeat("an answer long enough to fill pages ", 3000)
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{big}}, llmtest.Reply{Text: []string{"x"}}, llmtest.Reply{Text: []string{"y"}})
	cfg := promptConfig(t, srv, "")
	if _, stderr, err := runOtter(t, "--cwd", work, "--config", cfg, "-p", "first"); err != nil {
		t.Fatalf("otter -p: %v\n%s", err, stderr)
	}
	db := record.DefaultPath(paths.DataDir)
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	n := len(b) / page
	if n < 12 {
		t.Fatalf("otter.db has %d pages; the test needs more to damage its middle", n)
	}
	for k, p := range []int{n / 3, n/3 + 2, n / 2, 2 * n / 3} {
		for i := range page {
			b[p*page+i] = byte(i*13 + k + 5)
		}
	}
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runOtter(t, "--cwd", work, "--config", cfg, "-p", "second")
	if err != nil {
		t.Fatalf("otter -p with a damaged database: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, "not saved") || !strings.Contains(stderr, "otter sessions export") {
		t.Errorf("otter -p says %q; want that the database is damaged, nothing is saved, and how to export what reads", stderr)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(after, b) {
		t.Errorf("otter -p wrote into the damaged database")
	}
	if _, _, err := runOtter(t, "--cwd", work, "--config", cfg, "-c", "-p", "third"); err == nil {
		t.Errorf("otter -c -p resumed from the damaged database")
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(after, b) {
		t.Errorf("otter -c -p wrote into the damaged database")
	}
	// The sessions commands open it read-only, to read what still reads
	// (here the damage is in the only session's messages).
	if _, stderr, _ := runOtter(t, "--cwd", work, "sessions", "list"); !strings.Contains(stderr, "reading it read-only") {
		t.Errorf("otter sessions list on the damaged database did not read it read-only:\n%s", stderr)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(after, b) {
		t.Errorf("otter sessions list wrote into the damaged database")
	}
}

// TestSessionsCommandsHonourTheSessionsSettings: the sessions commands
// open the database through the App, as a conversation does, so that
// [sessions] applies to them too.
func TestSessionsCommandsHonourTheSessionsSettings(t *testing.T) {
	configTestHome(t)
	cfg := filepath.Join(t.TempDir(), "otter.toml")
	if err := os.WriteFile(cfg, []byte("[sessions]\nenabled = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := otterWithStdin(t, nil, "--config", cfg, "sessions", "list")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "saving conversations is turned off") {
		t.Errorf("sessions list with [sessions] enabled = false: %v", err)
	}
}
