package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// projectTree writes a git project with instruction files at two levels
// (AGENTS.md at the root, only CLAUDE.md in sub/), a user AGENTS.md, and
// notes.txt and pic.png in sub/; it returns sub/.
func projectTree(t *testing.T, userConfigDir string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "proj")
	sub := filepath.Join(root, "sub")
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewRGBA(image.Rect(0, 0, 3, 3))); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		filepath.Join(userConfigDir, "AGENTS.md"): []byte("USER-RULE: answer in English.\n"),
		filepath.Join(root, ".git", "HEAD"):       []byte("ref: refs/heads/main\n"),
		filepath.Join(root, "AGENTS.md"):          []byte("ROOT-RULE: run make test.\n"),
		filepath.Join(root, "CLAUDE.md"):          []byte("NOT-READ: AGENTS.md is here.\n"),
		filepath.Join(sub, "CLAUDE.md"):           []byte("SUB-RULE: this is the sub package.\n"),
		filepath.Join(sub, "notes.txt"):           []byte("NOTES-CONTENT: buy milk\n"),
		filepath.Join(sub, "pic.png"):             pic.Bytes(),
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sub
}

// inOrder reports whether every string of want is in s, in that order.
func inOrder(s string, want ...string) bool {
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}

// TestPromptSendsTheProject is issue 25's "done when" for -p: the request
// log shows the user's and the project's instruction files (a CLAUDE.md
// where a directory has no AGENTS.md) in order, none of the project's
// before it is trusted, @notes.txt as text and @pic.png as an image.
func TestPromptSendsTheProject(t *testing.T) {
	paths := configTestHome(t)
	sub := projectTree(t, paths.ConfigDir)
	model := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"Done."}}, llmtest.Reply{Text: []string{"Done again."}})
	cfg := promptConfig(t, model, "")
	prompt := "summarise @notes.txt and look at @pic.png"

	_, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", sub, "-p", prompt)
	if err != nil {
		t.Fatalf("otter -p: %v\n%s", err, stderr)
	}
	reqs := model.Requests()
	sys := reqs[0].System
	if !strings.Contains(sys, "USER-RULE") {
		t.Errorf("the user's AGENTS.md is not in the system prompt:\n%s", sys)
	}
	for _, held := range []string{"ROOT-RULE", "SUB-RULE", "NOT-READ"} {
		if strings.Contains(sys, held) {
			t.Errorf("%s was sent before the project was trusted:\n%s", held, sys)
		}
	}
	if !strings.Contains(stderr, "not reading") || !strings.Contains(stderr, filepath.Join(sub, "CLAUDE.md")) {
		t.Errorf("stderr does not say which files wait for trust:\n%s", stderr)
	}
	user := reqs[0].Messages[0]
	if !strings.Contains(user.Text, "NOTES-CONTENT: buy milk") || user.Images != 1 {
		t.Errorf("@notes.txt / @pic.png: text %q, %d images; want the notes and 1 image", user.Text, user.Images)
	}

	if err := paths.Trust(sub); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", sub, "-p", "again")
	if err != nil {
		t.Fatalf("otter -p: %v\n%s", err, stderr)
	}
	sys = model.Requests()[1].System
	if !inOrder(sys, "USER-RULE", "ROOT-RULE", "SUB-RULE") || strings.Contains(sys, "NOT-READ") {
		t.Errorf("trusted, the system prompt does not hold user, root AGENTS.md, sub CLAUDE.md in that order (and not the root's CLAUDE.md):\n%s", sys)
	}
	for _, p := range []string{filepath.Join(paths.ConfigDir, "AGENTS.md"), filepath.Join(filepath.Dir(sub), "AGENTS.md"), filepath.Join(sub, "CLAUDE.md")} {
		if !strings.Contains(sys, "## "+p+"\n") {
			t.Errorf("%s is not marked with its path:\n%s", p, sys)
		}
	}
}

// TestPromptFileRefusals: a binary file is refused by name, a file outside
// the project needs --attach-outside, and --no-instructions sends none.
func TestPromptFileRefusals(t *testing.T) {
	paths := configTestHome(t)
	sub := projectTree(t, paths.ConfigDir)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "prog"), []byte{0x7f, 'E', 'L', 'F', 0, 0, 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, model, "")

	_, _, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", sub, "-p", "run @prog")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "@prog is a binary file") {
		t.Errorf("binary: %v", err)
	}
	_, _, err = otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", sub, "-p", "read @"+outside)
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "outside the project") || !strings.Contains(err.Error(), "--attach-outside") {
		t.Errorf("outside: %v", err)
	}
	if len(model.Requests()) != 0 {
		t.Fatalf("a refused message reached the model")
	}
	_, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "--cwd", sub, "--attach-outside", "--no-instructions", "-p", "read @"+outside)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	req := model.Requests()[0]
	if !strings.Contains(req.Messages[0].Text, "OUTSIDE") {
		t.Errorf("--attach-outside did not attach the file: %q", req.Messages[0].Text)
	}
	if strings.Contains(req.System, "USER-RULE") {
		t.Errorf("--no-instructions still sent the user's AGENTS.md")
	}
}

// TestContinueWithNothingSavedStartsFresh: -c in an empty data directory
// starts a new conversation and says so, and --model reaches the request.
func TestContinueWithNothingSavedStartsFresh(t *testing.T) {
	configTestHome(t)
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"Hello."}})
	cfg := promptConfig(t, model, "")
	stdout, stderr, err := otterWithStdin(t, strings.NewReader(""), "--config", cfg, "-c", "--model", "chosen-model", "-p", "hi")
	if err != nil {
		t.Fatalf("otter -c -p: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "No saved conversation") || !strings.Contains(stderr, "new one") || !strings.Contains(stdout, "Hello.") {
		t.Errorf("stdout %q, stderr:\n%s", stdout, stderr)
	}
	if got := model.Requests()[0].Model; got != "chosen-model" {
		t.Errorf("the request's model is %q, want chosen-model", got)
	}
}

// TestPromptArgumentIsNotAnUnknownCommand: `otter hello` is a prompt for
// the TUI, `otter mpc list` still a mistyped command.
func TestPromptArgumentIsNotAnUnknownCommand(t *testing.T) {
	configTestHome(t)
	_, _, err := runOtter(t, "mpc", "list")
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "Did you mean this?") {
		t.Errorf("otter mpc list: %v", err)
	}
}
