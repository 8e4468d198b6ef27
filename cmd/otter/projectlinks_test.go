package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// putFiles writes files (path → content), making their folders.
func putFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, to, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, link); err != nil {
		t.Fatal(err)
	}
}

// linkingProject writes a private key in the test's HOME and a git
// project with .otter/ whose leak.txt links to the key and whose dir links
// to the key's folder; it returns the project and the key.
func linkingProject(t *testing.T) (proj, key string) {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	key = filepath.Join(home, ".ssh", "id_rsa")
	proj = filepath.Join(t.TempDir(), "proj")
	putFiles(t, map[string]string{
		key:                                   "PRIVATE-KEY-MATERIAL\n",
		filepath.Join(proj, ".git", "HEAD"):   "ref: refs/heads/main\n",
		filepath.Join(proj, ".otter", "x.md"): "",
		filepath.Join(proj, "notes.txt"):      "NOTES\n",
	})
	symlink(t, key, filepath.Join(proj, "leak.txt"))
	symlink(t, filepath.Dir(key), filepath.Join(proj, "dir"))
	return proj, key
}

// TestPromptRefusesLinksOutOfTheProject: @leak.txt, a link in the project
// to ~/.ssh/id_rsa, and @dir/id_rsa through a linked folder need
// --attach-outside, trusted or not; the refusal says where the link leads
// and nothing reaches the model. Before, the outside check compared the
// paths as written and the key went to the model.
func TestPromptRefusesLinksOutOfTheProject(t *testing.T) {
	paths := configTestHome(t)
	proj, key := linkingProject(t)
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, model, "")
	for _, trusted := range []bool{false, true} {
		if trusted {
			if err := paths.Trust(proj); err != nil {
				t.Fatal(err)
			}
		}
		for _, mention := range []string{"@leak.txt", "@dir/id_rsa"} {
			_, _, err := runOtter(t, "--config", cfg, "--cwd", proj, "-p", "read "+mention)
			wantExit(t, err, 2)
			if !strings.Contains(err.Error(), "links to "+key+", outside the project") || !strings.Contains(err.Error(), "--attach-outside") {
				t.Errorf("trusted %v, %s: %v; want it to say it links to %s and to name --attach-outside", trusted, mention, err, key)
			}
		}
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model; the first: %q", n, model.Requests()[0].Messages[0].Text)
	}
	_, stderr, err := runOtter(t, "--config", cfg, "--cwd", proj, "--attach-outside", "-p", "read @leak.txt")
	if err != nil {
		t.Fatalf("--attach-outside: %v\n%s", err, stderr)
	}
	if !strings.Contains(model.Requests()[0].Messages[0].Text, "PRIVATE-KEY-MATERIAL") {
		t.Errorf("--attach-outside did not attach the file the person allowed")
	}
}

// TestRefusedMentionsReadAsSentences is issue 35's item 3: a refused @file
// is one sentence after "the message was not sent:", in the unit the
// README gives the cap in. Before: "could not read @../huge.txt is too
// large to attach: the file is 409.6 kB; … up to 262.1 kB".
func TestRefusedMentionsReadAsSentences(t *testing.T) {
	configTestHome(t)
	proj, _ := linkingProject(t)
	putFiles(t, map[string]string{
		filepath.Join(proj, "huge.txt"): strings.Repeat("x\n", 200<<10),
		filepath.Join(proj, "bin.dat"):  "\x7fELF\x00\x00\x01",
	})
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, model, "")
	for mention, want := range map[string]string{
		"@huge.txt": "the message was not sent: @huge.txt is too large to attach: the file is 400 KiB; otter attaches text files up to 256 KiB, so attach a part of it",
		"@bin.dat":  "the message was not sent: @bin.dat is a binary file (application/octet-stream); otter attaches",
		"@/etc":     "the message was not sent: @/etc is outside the project (" + proj + ")",
	} {
		_, _, err := runOtter(t, "--config", cfg, "--cwd", proj, "-p", "read "+mention)
		wantExit(t, err, 2)
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s…", mention, err, want)
		}
	}
}

// TestTrustedProjectLinksOutAreNotRead: in a trusted project, an AGENTS.md
// that links to ~/.ssh/id_rsa and a .otter/commands/shadow.md that links to
// a file outside (standing for /etc/shadow) reach the model neither in
// the system prompt nor through /shadow; stderr names each file and where
// it leads. The user's own AGENTS.md may link anywhere. Before, both were
// sent and nothing said where the links pointed.
func TestTrustedProjectLinksOutAreNotRead(t *testing.T) {
	paths := configTestHome(t)
	proj, key := linkingProject(t)
	shadow := filepath.Join(t.TempDir(), "shadow")
	userRules := filepath.Join(t.TempDir(), "my-rules.md")
	putFiles(t, map[string]string{shadow: "SHADOW-CONTENT\n", userRules: "USER-RULE\n"})
	symlink(t, key, filepath.Join(proj, "AGENTS.md"))
	symlink(t, shadow, filepath.Join(proj, ".otter", "commands", "shadow.md"))
	symlink(t, userRules, filepath.Join(paths.ConfigDir, "AGENTS.md"))
	if err := paths.Trust(proj); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, model, "")
	_, stderr, err := runOtter(t, "--config", cfg, "--cwd", proj, "-p", "/shadow")
	if err != nil {
		t.Fatalf("otter -p /shadow: %v\n%s", err, stderr)
	}
	req := model.Requests()[0]
	all := req.System + "\n" + req.Messages[0].Text
	for _, secret := range []string{"PRIVATE-KEY-MATERIAL", "SHADOW-CONTENT"} {
		if strings.Contains(all, secret) {
			t.Errorf("%s reached the model:\n%s", secret, all)
		}
	}
	if !strings.Contains(req.System, "USER-RULE") {
		t.Errorf("the user's own AGENTS.md, a link out of their config folder, was not sent:\n%s", req.System)
	}
	for file, target := range map[string]string{
		filepath.Join(proj, "AGENTS.md"):                       key,
		filepath.Join(proj, ".otter", "commands", "shadow.md"): shadow,
	} {
		if !strings.Contains(stderr, file+" links to "+target+", outside the project") {
			t.Errorf("stderr does not say %s links to %s:\n%s", file, target, stderr)
		}
	}
}

// TestNamedPipesDoNotHangOtter drives the real binary in a trusted project
// holding named pipes — @fifo, an AGENTS.md and a command file — and wants
// each run over within 30 s (on a loaded machine; it takes well under one),
// with a message naming the pipe. Before, `otter -p "read @fifo"` waited in
// open(2) for a writer for good, and so did otter at start on a pipe
// called AGENTS.md or .otter/commands/x.md.
func TestNamedPipesDoNotHangOtter(t *testing.T) {
	bin := testpeer.Otter(t)
	paths := configTestHome(t)
	proj, _ := linkingProject(t)
	if err := paths.Trust(proj); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"ok"}}, llmtest.Reply{Text: []string{"ok"}})
	cfg := promptConfig(t, model, "")
	mkfifo := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, error, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--config", cfg, "--cwd", proj}, args...)...)
		cmd.Stdin = strings.NewReader("")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("otter %q still ran after 30 s:\n%s", args, out)
		}
		return string(out), err, time.Since(start)
	}

	mkfifo(filepath.Join(proj, "fifo"))
	out, err, took := run("-p", "read @fifo")
	t.Logf("otter -p \"read @fifo\": %v, %s", err, took)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(out, "@fifo is a named pipe (FIFO), not a regular file") {
		t.Errorf("read @fifo: %v\n%s\nwant exit 2 saying @fifo is a named pipe", err, out)
	}

	mkfifo(filepath.Join(proj, "AGENTS.md"))
	mkfifo(filepath.Join(proj, ".otter", "commands", "x.md"))
	out, err, took = run("-p", "hello")
	t.Logf("otter -p hello with pipes for AGENTS.md and a command: %v, %s", err, took)
	if err != nil {
		t.Fatalf("otter -p hello: %v\n%s", err, out)
	}
	for _, p := range []string{filepath.Join(proj, "AGENTS.md"), filepath.Join(proj, ".otter", "commands", "x.md")} {
		if !strings.Contains(out, p+" is a named pipe (FIFO)") {
			t.Errorf("the output does not say %s is a named pipe:\n%s", p, out)
		}
	}
	if len(model.Requests()) != 1 {
		t.Errorf("%d requests reached the model, want 1 (hello)", len(model.Requests()))
	}
}
