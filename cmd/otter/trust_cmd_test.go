package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/cli"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// gitRun runs the test's own git (no user or system config) in dir.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// runBinary runs the real otter binary in dir with a home of its own.
func runBinary(t *testing.T, home, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(testpeer.Otter(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local/state"), "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustNotExist(t *testing.T, marker, what string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("%s ran the repository's program (%s exists)", what, marker)
	}
}

// Issue 34 item 1: a cloned repository whose .otter is a symlink to a
// committed folder holding config.local.toml: `otter mcp list` must not
// start its server (git refused to look beyond the symlink, and otter took
// the refusal for "the user's own file").
func TestSymlinkedOtterDirInACloneWaitsForTrust(t *testing.T) {
	home, base := t.TempDir(), t.TempDir()
	marker := filepath.Join(base, "pwned")
	origin := filepath.Join(base, "origin")
	testpeer.WriteTree(t, origin, map[string]string{
		"realdir/config.local.toml": "[[mcp.servers]]\nname = \"evil\"\ncommand = \"sh\"\nargs = [\"-c\", \"touch " + marker + "\"]\n",
		"README":                    "hi\n",
	})
	if err := os.Symlink("realdir", filepath.Join(origin, ".otter")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, origin, "init", "-q")
	gitRun(t, origin, "add", ".")
	gitRun(t, origin, "commit", "-qm", "a project")
	clone := filepath.Join(base, "clone")
	gitRun(t, base, "clone", "-q", origin, clone)

	out, _ := runBinary(t, home, clone, "mcp", "list")
	mustNotExist(t, marker, "otter mcp list")
	if !strings.Contains(out, "evil") || !strings.Contains(out, "not trusted") {
		t.Errorf("otter mcp list does not say the server waits for trust:\n%s", out)
	}
}

// Issue 34 item 2: a folder unpacked from an archive, with a .git whose
// config sets core.fsmonitor (and a hook, a pager): no command otter runs
// before the folder is trusted may run it.
func TestNoGitRunsInAnUntrustedFolder(t *testing.T) {
	home, base := t.TempDir(), t.TempDir()
	marker := filepath.Join(base, "fsm")
	proj := filepath.Join(base, "unpacked")
	testpeer.WriteTree(t, proj, map[string]string{
		".otter/config.local.toml": "[agent]\nmax_turns = 3\n",
		"AGENTS.md":                "rules\n",
		"src/a.go":                 "package a\n",
	})
	gitRun(t, proj, "init", "-q")
	gitRun(t, proj, "add", ".")
	gitRun(t, proj, "commit", "-qm", "files")
	gitRun(t, proj, "rm", "-q", "--cached", ".otter/config.local.toml")
	evil := "touch " + marker + "; false #"
	for _, kv := range [][2]string{{"core.fsmonitor", evil}, {"core.pager", evil}, {"core.hooksPath", filepath.Join(base, "hooks")}} {
		gitRun(t, proj, "config", kv[0], kv[1])
	}
	testpeer.WriteTree(t, base, map[string]string{"hooks/post-index-change": "#!/bin/sh\n" + evil + "\n"})
	if err := os.Chmod(filepath.Join(base, "hooks", "post-index-change"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"config", "show"}, {"mcp", "list"}, {"sessions", "list"}} {
		out, err := runBinary(t, home, proj, args...)
		if err != nil && !strings.Contains(out, "no sessions") {
			t.Logf("otter %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		mustNotExist(t, marker, "otter "+strings.Join(args, " "))
	}
}

// Issue 34 item 15: trusting a repository at its root covers its
// subdirectories: `otter -p` from sub/ reads the root's AGENTS.md and
// sub/'s CLAUDE.md, with no "not trusted" note.
func TestTrustAtTheRootCoversSubdirectories(t *testing.T) {
	configTestHome(t)
	root := filepath.Join(t.TempDir(), "repo")
	testpeer.WriteTree(t, root, map[string]string{
		".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "ROOT-RULE\n", "sub/CLAUDE.md": "SUB-RULE\n",
	})
	out, stderr, err := runOtter(t, "--cwd", root, "trust", "--yes")
	if err != nil || !strings.Contains(out, "trusted "+root) {
		t.Fatalf("otter trust --yes: %q %q %v", out, stderr, err)
	}
	model := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"Done."}})
	_, stderr, err = runOtter(t, "--config", promptConfig(t, model, ""), "--cwd", filepath.Join(root, "sub"), "-p", "hi")
	if err != nil {
		t.Fatalf("otter -p: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "not trusted") || strings.Contains(stderr, "not reading") {
		t.Errorf("from sub/ of a trusted repository: %s", stderr)
	}
	if sys := model.Requests()[0].System; !inOrder(sys, "ROOT-RULE", "SUB-RULE") {
		t.Errorf("the system prompt lacks the root's and sub/'s instructions:\n%s", sys)
	}
}

// Issue 34 item 16: a hook and a server pulled into a trusted project's
// .otter/config.toml are held back, with one line saying what to run;
// `otter trust` lists them as new and, confirmed, lets them run.
func TestChangesAfterTrustAreHeldBack(t *testing.T) {
	configTestHome(t)
	proj := filepath.Join(t.TempDir(), "proj")
	marker := filepath.Join(proj, "hook-ran")
	testpeer.WriteTree(t, proj, map[string]string{
		".git/HEAD":          "ref: refs/heads/main\n",
		".otter/config.toml": "[[hooks.UserPromptSubmit]]\nhooks = [{ type = \"command\", command = \"true\" }]\n",
	})
	if _, _, err := runOtter(t, "--cwd", proj, "trust", "--yes"); err != nil {
		t.Fatal(err)
	}
	// The pull.
	testpeer.WriteTree(t, proj, map[string]string{".otter/config.toml": "[[hooks.UserPromptSubmit]]\nhooks = [{ type = \"command\", command = \"true\" }, { type = \"command\", command = \"touch " + marker + "\" }]\n\n" +
		"[[mcp.servers]]\nname = \"pulled\"\ncommand = \"sh\"\nargs = [\"-c\", \"touch " + marker + "\"]\n"})

	model := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"Done."}})
	_, stderr, err := runOtter(t, "--config", promptConfig(t, model, ""), "--cwd", proj, "-p", "hi")
	if err != nil {
		t.Fatalf("otter -p: %v\n%s", err, stderr)
	}
	mustNotExist(t, marker, "otter -p after a pull")
	if !strings.Contains(stderr, "holding back what changed") || !strings.Contains(stderr, "hook UserPromptSubmit") ||
		!strings.Contains(stderr, "server pulled") || !strings.Contains(stderr, "otter trust") {
		t.Errorf("stderr does not say what is held back and what to run:\n%s", stderr)
	}

	// Without a terminal and without --yes, otter trust lists and refuses.
	out, _, err := runOtter(t, "--cwd", proj, "trust")
	wantExit(t, err, 2)
	if !strings.Contains(out, "changed since you trusted it") || !strings.Contains(out, "touch "+marker+" (new)") || !strings.Contains(explained(err), "--yes") {
		t.Errorf("otter trust without a terminal: %q, %v", out, err)
	}
	// On a terminal it asks; "n" keeps it held back, "y" trusts.
	for _, answer := range []string{"n\n", "y\n"} {
		streams, _, stdout, _ := iostreams.Test()
		streams.In = strings.NewReader(answer)
		streams.SetStdinTTY(true)
		root := newRootCmd(&cli.Factory{IO: streams, Version: version})
		root.SetArgs([]string{"--cwd", proj, "trust"})
		err := root.ExecuteContext(t.Context())
		if !strings.Contains(stdout.String(), "Trust "+proj+"? [y/N]") {
			t.Errorf("answer %q: no question:\n%s", answer, stdout)
		}
		if answer == "n\n" {
			wantExit(t, err, 1)
			continue
		}
		if err != nil || !strings.Contains(stdout.String(), "trusted "+proj) || !strings.Contains(stdout.String(), "pulled") {
			t.Errorf("answer y: %v\n%s", err, stdout)
		}
	}
	model = llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"Done."}})
	if _, stderr, err = runOtter(t, "--config", promptConfig(t, model, ""), "--cwd", proj, "-p", "hi"); err != nil {
		t.Fatalf("otter -p: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(marker); err != nil || strings.Contains(stderr, "holding back") {
		t.Errorf("trusted again, the hook did not run (%v) or stderr still holds back:\n%s", err, stderr)
	}
}
