package localtools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/testpeer"
)

// These tests drive the real otter binary (otter -p) in a temporary
// project with real files and a real bash; the fake model server
// (llmtest) plays the model's tool calls, and what the model received
// back is read from its requests.

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		// This test binary is the sandbox launcher of the package's own
		// tests (otter's binary is, for otter).
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	os.Exit(testpeer.Run(m))
}

// world is a temporary machine: a home with a secret, otter's folders in
// it, a temporary directory of its own (so that the home is not inside
// the sandbox's writable temporary directory) and a project.
type world struct {
	t    *testing.T
	bin  string
	home string
	proj string
	env  []string
}

func newWorld(t *testing.T, files map[string]string) *world {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("run_command's sandbox is Linux's Landlock")
	}
	root := t.TempDir()
	w := &world{t: t, bin: testpeer.Otter(t), home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj")}
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{filepath.Join(w.home, ".ssh"), tmp, filepath.Join(w.proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.home, ".ssh", "id_rsa"), []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		w.write(p, data)
	}
	w.env = append(testpeer.HomeEnv(w.home), "TMPDIR="+tmp)
	return w
}

func (w *world) write(p, data string) {
	w.t.Helper()
	full := filepath.Join(w.proj, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) read(p string) string {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.proj, p))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// run runs otter -p in the project with the fake model srv and extra
// config, and flags; it returns the json result and stderr.
func (w *world) run(srv *llmtest.Server, extra string, flags ...string) (result, string) {
	w.t.Helper()
	cfg := filepath.Join(w.home, "otter.toml")
	text := fmt.Sprintf("[agent]\nprovider = \"fake\"\nmodel = \"fake-model\"\n\n[providers.fake]\ntype = %q\nbase_url = %q\napi_key = \"test-key\"\n%s",
		string(srv.Kind), srv.URL, extra)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--config", cfg, "--cwd", w.proj, "-p", "go", "--output-format", "json"}, flags...)
	out := testpeer.Cmd{Path: w.bin, Dir: w.proj, Env: w.env}.Run(w.t, ctx, args...)
	var r result
	if err := json.Unmarshal([]byte(out.Stdout), &r); err != nil {
		w.t.Fatalf("otter -p: %v\nstdout:\n%s\nstderr:\n%s", err, out.Stdout, out.Stderr)
	}
	return r, out.Stderr
}

// result is what otter -p --output-format json prints, in part.
type result struct {
	Result       string   `json:"result"`
	IsError      bool     `json:"is_error"`
	FilesChanged []string `json:"files_changed"`
	ToolCalls    []struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		IsError bool   `json:"is_error"`
		Error   string `json:"error"`
	} `json:"tool_calls"`
}

// calls makes one reply of the model calling each of calls, in order.
func calls(cs ...llmtest.Call) llmtest.Reply { return llmtest.Reply{Calls: cs} }

func c(id, name, args string) llmtest.Call { return llmtest.Call{ID: id, Name: name, Args: args} }

// results maps each tool call's ID to what the model received for it,
// from every request the fake server got.
func results(srv *llmtest.Server) map[string]llmtest.ToolResult {
	out := map[string]llmtest.ToolResult{}
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			for _, tr := range m.ToolResults {
				out[tr.CallID] = tr
			}
		}
	}
	return out
}

func wantResult(t *testing.T, got map[string]llmtest.ToolResult, id string, isErr bool, parts ...string) {
	t.Helper()
	r, ok := got[id]
	if !ok {
		t.Errorf("%s: the model got no result", id)
		return
	}
	if r.IsError != isErr {
		t.Errorf("%s: is_error %v, want %v: %s", id, r.IsError, isErr, r.Text)
	}
	for _, p := range parts {
		if !strings.Contains(r.Text, p) {
			t.Errorf("%s: the result lacks %q:\n%s", id, p, r.Text)
		}
	}
}

// Each tool through the real binary, with --allow-tools for those that
// ask: read_file pages with line numbers and returns an image as one,
// find_files honours .gitignore, search_files lists file:line, edit_file
// and write_file change the files (and -p's json lists them), run_command
// runs bash in the project, and a background command is read with
// command_output until it says it ended — the model polls on what it is
// told, not on a clock.
func TestEachToolThroughOtter(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
	w := newWorld(t, map[string]string{
		"main.go": "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n", ".gitignore": "build/\n",
		"build/gen.go": "package gen // hello\n", "docs/a.md": "# Hello docs\n", "logo.png": string(png),
	})
	// Anthropic's protocol: OpenAI's takes no image in a tool result.
	srv := llmtest.New(t, llmtest.Anthropic,
		calls(c("read", "read_file", `{"path":"main.go","offset":3,"limit":2}`), c("img", "read_file", `{"path":"logo.png"}`),
			c("find", "find_files", `{"pattern":"**/*.go"}`), c("search", "search_files", `{"pattern":"hello","ignore_case":true}`)),
		calls(c("edit", "edit_file", `{"path":"main.go","old_string":"println(\"hello\")","new_string":"println(\"hi\")"}`),
			c("write", "write_file", `{"path":"notes/todo.txt","content":"one\ntwo\n"}`)),
		calls(c("run", "run_command", `{"command":"pwd; cat notes/todo.txt | wc -l"}`),
			c("bg", "run_command", `{"command":"echo begun; sleep 0.3; echo finished","background":true}`)),
	)
	polls := 0
	srv.Respond = func(r llmtest.Request) llmtest.Reply {
		last := r.LastToolResults()
		if len(last) == 1 && strings.Contains(last[0].Text, "ended: exit 0") {
			return llmtest.Reply{Text: []string{"all done"}}
		}
		polls++
		return calls(c(fmt.Sprintf("out%d", polls), "command_output", `{"id":"cmd-1","wait_ms":5000}`))
	}
	res, stderr := w.run(srv, "", "--allow-tools", "edit_file,write_file,run_command")
	if res.IsError || res.Result != "all done" {
		t.Fatalf("the run failed: %+v\n%s", res, stderr)
	}
	got := results(srv)
	wantResult(t, got, "read", false, "     3\tfunc main() {\n     4\t\tprintln(\"hello\")\n", "[lines 3–4 of 5; read on with offset 5]")
	if got["img"].Images != 1 {
		t.Errorf("the image was not sent as an image: %+v", got["img"])
	}
	wantResult(t, got, "find", false, "main.go")
	if strings.Contains(got["find"].Text, "build/") {
		t.Errorf("find_files lists what .gitignore leaves out: %s", got["find"].Text)
	}
	wantResult(t, got, "search", false, "docs/a.md:1: # Hello docs", "main.go:4: \tprintln(\"hello\")")
	wantResult(t, got, "edit", false, "Edited main.go: 1 replacement(s).", "-\tprintln(\"hello\")\n+\tprintln(\"hi\")")
	wantResult(t, got, "write", false, "Created notes/todo.txt (2 lines")
	wantResult(t, got, "run", false, w.proj+"\n2\n[exit 0 after")
	wantResult(t, got, "bg", false, "Started in the background as cmd-1")
	var seen string
	for i := 1; i <= polls; i++ {
		seen += got[fmt.Sprintf("out%d", i)].Text
	}
	if !strings.Contains(seen, "begun\n") || !strings.Contains(seen, "finished\n[cmd-1 ended: exit 0") {
		t.Errorf("command_output did not return the background command's output and end: %q", seen)
	}
	if w.read("main.go") != "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n" || w.read("notes/todo.txt") != "one\ntwo\n" {
		t.Errorf("the files are not as the calls left them:\n%s\n%s", w.read("main.go"), w.read("notes/todo.txt"))
	}
	want := []string{filepath.Join(w.proj, "main.go"), filepath.Join(w.proj, "notes", "todo.txt")}
	if !slices.Equal(res.FilesChanged, want) {
		t.Errorf("files_changed = %q, want %q", res.FilesChanged, want)
	}
	// The system prompt says the tools exist and where the project is.
	if sys := srv.Requests()[0].System; !strings.Contains(sys, "You work in the user's project at "+w.proj) {
		t.Errorf("the system prompt does not say where the project is:\n%s", sys)
	}
}

// Without --allow-tools a headless run reads inside the project but
// neither edits, writes, runs a command nor reads outside it; each
// refusal says which flag allows it, and nothing changed on disk.
func TestHeadlessRefusesWhatAsks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, map[string]string{"a.txt": "alpha\n"})
	outside := filepath.Join(w.home, "notes.txt")
	if err := os.WriteFile(outside, []byte("private\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.proj, "link.txt")); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.OpenAI,
		calls(c("read", "read_file", `{"path":"a.txt"}`), c("abs", "read_file", fmt.Sprintf(`{"path":%q}`, outside)),
			c("link", "read_file", `{"path":"link.txt"}`)),
		calls(c("edit", "edit_file", `{"path":"a.txt","old_string":"alpha","new_string":"beta"}`),
			c("run", "run_command", `{"command":"touch made-by-command"}`)),
		llmtest.Reply{Text: []string{"done"}},
	)
	res, stderr := w.run(srv, "")
	got := results(srv)
	wantResult(t, got, "read", false, "alpha")
	wantResult(t, got, "abs", true, "needs permission (it reads outside the project: "+outside+")", "--allow-tools read_file")
	wantResult(t, got, "link", true, "it reads outside the project: "+filepath.Join(w.proj, "link.txt")+" (it leads to "+outside+")")
	wantResult(t, got, "edit", true, "edit_file needs permission", "--allow-tools edit_file")
	wantResult(t, got, "run", true, "run_command needs permission")
	if strings.Contains(got["link"].Text, "private") || w.read("a.txt") != "alpha\n" || w.read("made-by-command") == "" {
		t.Errorf("a refused call ran:\n%+v\n%s", got, stderr)
	}
	if len(res.FilesChanged) != 0 {
		t.Errorf("files_changed = %q", res.FilesChanged)
	}
}

// The refusals of the tools themselves, each with a sentence the model
// can act on: an ambiguous old_string, a file changed on disk since it
// was read (by a command), an edit of a file never read, a binary file, a
// named pipe (refused without waiting for a writer), a path that does not
// exist, and a command that runs past its timeout (stopped).
func TestToolsRefuseWithAReason(t *testing.T) {
	t.Parallel()
	w := newWorld(t, map[string]string{"dup.txt": "x = 1\ny = 1\n", "stale.txt": "v1\n", "unread.txt": "u\n", "blob.bin": "\x00\x01\x02\x03"})
	if err := syscall.Mkfifo(filepath.Join(w.proj, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.OpenAI,
		calls(c("r1", "read_file", `{"path":"dup.txt"}`), c("r2", "read_file", `{"path":"stale.txt"}`)),
		calls(c("touch", "run_command", `{"command":"echo v2 >> stale.txt"}`)),
		calls(c("dup", "edit_file", `{"path":"dup.txt","old_string":"= 1","new_string":"= 2"}`),
			c("stale", "edit_file", `{"path":"stale.txt","old_string":"v1","new_string":"v3"}`),
			c("unread", "write_file", `{"path":"unread.txt","content":"new"}`),
			c("bin", "read_file", `{"path":"blob.bin"}`), c("fifo", "read_file", `{"path":"pipe"}`),
			c("none", "read_file", `{"path":"nope.txt"}`),
			c("slow", "run_command", `{"command":"sleep 30","timeout_ms":300}`)),
		llmtest.Reply{Text: []string{"done"}},
	)
	start := time.Now()
	_, stderr := w.run(srv, "", "--allow-tools", "edit_file,write_file,run_command")
	if took := time.Since(start); took > 25*time.Second {
		t.Errorf("the run took %s: the timeout or the pipe held it", took)
	}
	got := results(srv)
	wantResult(t, got, "dup", true, "old_string occurs 2 times in dup.txt (lines 1, 2)", "replace_all")
	wantResult(t, got, "stale", true, "stale.txt changed on disk since it was last read", "read it again")
	wantResult(t, got, "unread", true, "unread.txt has not been read in this conversation")
	wantResult(t, got, "bin", true, "blob.bin is a binary file")
	wantResult(t, got, "fifo", true, "pipe is a named pipe (FIFO), not a regular file")
	wantResult(t, got, "none", true, "nope.txt does not exist")
	wantResult(t, got, "slow", true, "timed out after 300ms, and was stopped")
	if w.read("dup.txt") != "x = 1\ny = 1\n" || w.read("stale.txt") != "v1\nv2\n" || w.read("unread.txt") != "u\n" {
		t.Errorf("a refused change was made:\n%s", stderr)
	}
}

// A sandboxed command that tries to write in the home directory and to
// read ~/.ssh/id_rsa is refused both, and its result says what the
// sandbox refused and the line of config that would allow it; writing in
// the project works.
func TestSandboxedCommandIsRefusedAndSaysSo(t *testing.T) {
	t.Parallel()
	if err := sandbox.Available(); err != nil {
		t.Fatalf("this machine's kernel must have Landlock for this test: %v", err)
	}
	w := newWorld(t, nil)
	key := filepath.Join(w.home, ".ssh", "id_rsa")
	srv := llmtest.New(t, llmtest.OpenAI,
		calls(c("home", "run_command", `{"command":"echo x > $HOME/x"}`), c("key", "run_command", `{"command":"cat ~/.ssh/id_rsa"}`),
			c("proj", "run_command", `{"command":"echo ok > in-project.txt && cat in-project.txt"}`)),
		llmtest.Reply{Text: []string{"done"}},
	)
	_, stderr := w.run(srv, "", "--allow-tools", "run_command")
	got := results(srv)
	cfg := filepath.Join(w.home, ".config", "otter", "config.toml")
	wantResult(t, got, "home", true, "the sandbox refused "+filepath.Join(w.home, "x"),
		fmt.Sprintf("add write = [%q] to [sandbox] commands in %s", w.home, cfg))
	wantResult(t, got, "key", true, "the sandbox refused "+key, fmt.Sprintf("commands do not read your secrets (%s)", filepath.Dir(key)))
	if strings.Contains(got["key"].Text, "PRIVATE KEY") {
		t.Errorf("the command read the key:\n%s", got["key"].Text)
	}
	if _, err := os.Stat(filepath.Join(w.home, "x")); err == nil {
		t.Errorf("the command wrote in the home directory\n%s", stderr)
	}
	wantResult(t, got, "proj", false, "ok\n[exit 0")
}

// otter -p never runs a command outside the sandbox, even with every tool
// allowed: the person is asked that one command at a time, in the TUI.
func TestHeadlessNeverRunsOutsideTheSandbox(t *testing.T) {
	t.Parallel()
	if err := sandbox.Available(); err != nil {
		t.Fatalf("this machine's kernel must have Landlock for this test: %v", err)
	}
	w := newWorld(t, nil)
	srv := llmtest.New(t, llmtest.OpenAI,
		calls(c("home", "run_command", `{"command":"echo x > $HOME/x"}`)),
		llmtest.Reply{Text: []string{"done"}},
	)
	_, stderr := w.run(srv, "", "--dangerously-allow-all")
	got := results(srv)
	wantResult(t, got, "home", true, "the sandbox refused "+filepath.Join(w.home, "x"))
	if _, err := os.Stat(filepath.Join(w.home, "x")); err == nil || strings.Contains(got["home"].Text, "outside the sandbox, as") {
		t.Errorf("otter -p ran the refused command outside the sandbox: %s\n%s", got["home"].Text, stderr)
	}
}

// [permissions] rules match each command of a chain: with
// run_command(echo:*) allowed, "echo a && echo b" runs without a flag,
// and a chain with one part no rule allows ("echo hi; touch pwned") is
// refused whole — nothing of it runs.
func TestChainedCommandNeedsEveryPartAllowed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	srv := llmtest.New(t, llmtest.OpenAI,
		calls(c("ok", "run_command", `{"command":"echo a && echo b"}`), c("chain", "run_command", `{"command":"echo hi > said; touch pwned"}`),
			c("subst", "run_command", `{"command":"echo $(touch pwned2)"}`)),
		llmtest.Reply{Text: []string{"done"}},
	)
	_, stderr := w.run(srv, "[permissions]\n\"run_command(echo:*)\" = \"allow\"\n")
	got := results(srv)
	wantResult(t, got, "ok", false, "a\nb\n[exit 0")
	wantResult(t, got, "chain", true, "run_command needs permission")
	wantResult(t, got, "subst", true, "run_command needs permission")
	for _, f := range []string{"said", "pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(w.proj, f)); err == nil {
			t.Errorf("a part of a refused chain ran: %s exists\n%s", f, stderr)
		}
	}
}

// [tools] local = false offers none of the tools.
func TestLocalToolsCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"done"}})
	w.run(srv, "[tools]\nlocal = false\n")
	offered := srv.Requests()[0].Tools
	for _, n := range []string{"read_file", "edit_file", "run_command"} {
		if slices.Contains(offered, n) {
			t.Errorf("%s is offered with [tools] local = false: %q", n, offered)
		}
	}
	srv2 := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"done"}})
	w.run(srv2, "")
	if !slices.Contains(srv2.Requests()[0].Tools, "run_command") {
		t.Errorf("run_command is not offered by default: %q", srv2.Requests()[0].Tools)
	}
}
