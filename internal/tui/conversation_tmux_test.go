package tui

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// The conversation's behaviour lives in app.Conversation; these tests run
// it through both front ends of the real binary: the TUI in tmux and
// `otter -p`.

// everythingConfig configures server-everything as "everything"; with gate
// set it starts only once the file gate exists (a server slow to start).
func everythingConfig(t *testing.T, marker, gate string) string {
	peers := testpeer.Require(t)
	if gate == "" {
		return fmt.Sprintf("\n[[mcp.servers]]\nname = \"everything\"\ncommand = %q\nargs = [%q, \"stdio\"]\nenv = { OTTER_TMUX_TEST = %q }\n",
			peers.Node, peers.Everything, marker)
	}
	script := fmt.Sprintf("while [ ! -e %q ]; do sleep 0.1; done; exec %q %q stdio", gate, peers.Node, peers.Everything)
	return fmt.Sprintf("\n[[mcp.servers]]\nname = \"everything\"\ncommand = \"sh\"\nargs = [\"-c\", %q]\nenv = { OTTER_TMUX_TEST = %q }\n",
		script, marker)
}

// quit quits the TUI with ctrl+c twice and waits until otter exited 0.
func (p *tmuxPane) quit() {
	p.t.Helper()
	p.keys("C-c")
	p.waitFor("press ctrl+c again to quit")
	p.keys("C-c")
	p.exited()
}

// exited waits until otter has exited 0 and returns when it was seen to
// (within a few milliseconds: quitting is timed with it).
func (p *tmuxPane) exited() time.Time {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		// run.sh writes the file once otter has exited; it may be seen
		// empty, just created.
		if b, err := os.ReadFile(p.exitFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			at := time.Now()
			if got := strings.TrimSpace(string(b)); got != "exit=0" {
				p.t.Fatalf("otter ended with %s", got)
			}
			os.Remove(p.exitFile)
			return at
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("otter did not quit:\n%s", p.capture())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// restart starts the pane's otter again with args (as run.sh does).
func (p *tmuxPane) restart(dir string, args ...string) {
	p.t.Helper()
	script, err := os.ReadFile(filepath.Join(dir, "run.sh"))
	if err != nil {
		p.t.Fatal(err)
	}
	bin := testpeer.Otter(p.t)
	again := strings.Replace(string(script), "\""+bin+"\"\n", "\""+bin+"\""+quoted(args)+"\n", 1)
	if again == string(script) {
		p.t.Fatalf("run.sh does not start %s on a line of its own:\n%s", bin, script)
	}
	name := filepath.Join(dir, "run-again.sh")
	if err := os.WriteFile(name, []byte(again), 0o755); err != nil {
		p.t.Fatal(err)
	}
	// The last session's server may still be exiting: wait until it is
	// gone, then start a new one.
	deadline := time.Now().Add(20 * time.Second)
	for exec.Command(p.tmux, "-S", p.sock, "has-session").Run() == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for try := 0; ; try++ {
		out, err := exec.Command(p.tmux, "-S", p.sock, "new-session", "-d", "-s", p.name, "-x", "100", "-y", "40", name).CombinedOutput()
		if err == nil {
			return
		}
		if try == 5 {
			p.t.Fatalf("tmux new-session: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// prompt runs `otter ARGS` (the -p front end) with the pane's home,
// config and working directory, and returns its stdout and stderr.
func (p *tmuxPane) prompt(args ...string) (string, string) {
	p.t.Helper()
	stdout, stderr, err := p.run(args...)
	if err != nil {
		p.t.Fatalf("otter %q: %v\n%s", args, err, stderr)
	}
	return stdout, stderr
}

// run runs `otter ARGS` as prompt does, and returns how it ended too.
func (p *tmuxPane) run(args ...string) (string, string, error) {
	p.t.Helper()
	cmd := exec.Command(testpeer.Otter(p.t), args...)
	cmd.Dir = p.work
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains([]string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"}, k) {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+p.home, "XDG_CONFIG_HOME="+filepath.Join(p.home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(p.home, ".local/state"), "XDG_DATA_HOME="+filepath.Join(p.home, ".local/share"),
		"XDG_CACHE_HOME="+filepath.Join(p.home, ".cache"))
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// Issue 28, walk 1: the TUI's first message, typed while a server is still
// starting, waits for it (saying so) and goes out with its tools, as -p
// does.
func TestTUIFirstMessageWaitsForStartingServers(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Five."}})
	// A hosted model's window, so that the server's tools are offered
	// whole rather than behind tool_search (smaller windows defer them).
	cfg := fakeModelConfig(model.URL) + "context_window = 200000\n" + everythingConfig(t, dir, gate)
	p := startTmux(t, dir, cfg, 100, 36)
	p.waitFor("fake/fake-model", "0/1 servers")
	p.keys("add 2 and 3", "Enter")
	p.waitFor("waiting for 1 server to start — esc sends now")
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the message went out while the server was starting (%d requests)", n)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitFor("Five.")
	p.waitGone("esc sends now")
	if tools := model.Requests()[0].Tools; !slices.Contains(tools, "mcp__everything__get-sum") {
		t.Errorf("the first message was offered %q, without the starting server's tools", tools)
	}
	p.quit()
}

// Issue 28, walk 2: /clear, quit, then continue — in the TUI (otter -c)
// and with -p (otter -c -p) — never brings the cleared conversation back;
// both say why a new one begins.
func TestClearedConversationIsNotContinued(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Noted: heron."}}, llmtest.Reply{Text: []string{"What word?"}})
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 36)
	p.waitFor("fake/fake-model")
	p.keys("remember the word heron", "Enter")
	p.waitFor("Noted: heron.")
	p.keys("/clear", "Enter")
	p.waitGone("Noted: heron.")
	p.quit()

	p.restart(dir, "-c")
	s := p.waitFor("(remember the word heron), was cleared, so this is a new") // the note may wrap
	if strings.Contains(s, "Noted: heron.") || strings.Contains(s, "› remember") {
		t.Errorf("otter -c shows the cleared conversation:\n%s", s)
	}
	p.quit()

	_, stderr := p.prompt("-c", "-p", "what was the word?")
	if !strings.Contains(stderr, "was cleared, so this is a new one") {
		t.Errorf("otter -c -p does not say the latest conversation was cleared:\n%s", stderr)
	}
	reqs := model.Requests()
	if last := reqs[len(reqs)-1].Messages; len(last) != 1 || strings.Contains(last[0].Text, "heron") {
		t.Errorf("after /clear, otter -c -p sent the model %+v", last)
	}
}

// An @SERVER:URI mention is expanded in one place (app.Conversation): the
// TUI and -p both attach the resource, show it, and send its text.
func TestMentionThroughBothFrontEnds(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Got it."}}, llmtest.Reply{Text: []string{"Got it again."}})
	p := startTmux(t, dir, fakeModelConfig(model.URL)+everythingConfig(t, dir, ""), 100, 36)
	p.waitFor("1/1 servers")
	const mention = "@everything:demo://resource/static/document/architecture.md"
	p.keys("summarise "+mention, "Enter")
	p.waitFor("⎘ "+mention+" (text/markdown", "Got it.")
	p.quit()

	_, stderr := p.prompt("-p", "summarise "+mention)
	if !strings.Contains(stderr, "otter: attached "+mention+" (text/markdown") {
		t.Errorf("-p did not say what it attached:\n%s", stderr)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want one per front end", len(reqs))
	}
	for i, r := range reqs {
		if !strings.Contains(r.Messages[0].Text, "# Everything Server") {
			t.Errorf("front end %d did not send the document: %.200q", i, r.Messages[0].Text)
		}
	}
}

// The note that says which saved conversation continues is worded once
// (app.Conversation.Notes): otter -c -p and the TUI's otter -c both show
// it, naming the session and its title.
func TestResumedNoteThroughBothFrontEnds(t *testing.T) {
	dir := t.TempDir()
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Noted: heron."}}, llmtest.Reply{Text: []string{"Heron."}})
	p := startTmux(t, dir, fakeModelConfig(model.URL), 100, 36)
	p.waitFor("fake/fake-model")
	p.keys("remember the word heron", "Enter")
	p.waitFor("Noted: heron.")
	p.quit()

	_, stderr := p.prompt("-c", "-p", "what was the word?")
	if !strings.Contains(stderr, "otter: Continuing session ") || !strings.Contains(stderr, "(remember the word heron, 2 messages") {
		t.Errorf("otter -c -p does not say which conversation continues:\n%s", stderr)
	}
	if last := model.Requests()[1].Messages; len(last) != 3 || !strings.Contains(last[0].Text, "heron") {
		t.Errorf("otter -c -p sent the model %+v, want the earlier conversation and the question", last)
	}

	p.restart(dir, "-c")
	p.waitFor("Continuing session", "(remember the word heron, 4 messages")
	p.quit()
}
