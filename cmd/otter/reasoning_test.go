package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// testHomeEnv is the environment of the real binary with a home of its
// own under a temporary directory, which it returns.
func testHomeEnv(t *testing.T) (env []string, home string) {
	home = t.TempDir()
	env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	return env, home
}

// `otter -p --verbose` prints the model's thinking on stderr, on a line
// of its own; without --verbose nothing of it is printed, and stdout is
// the answer alone either way.
func TestPromptVerbosePrintsThinking(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	reply := llmtest.Reply{Thinking: []string{"The person greets me; ", "greet back."}, Text: []string{"Hello there."}}
	for _, verbose := range []bool{true, false} {
		srv := llmtest.New(t, llmtest.Anthropic, reply)
		cfg := promptConfig(t, srv, "thinking = \"low\"\n")
		env, home := testHomeEnv(t)
		args := []string{"--config", cfg, "-p", "hello"}
		if verbose {
			args = append(args, "--verbose")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, home
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("otter %s: %v\n%s", strings.Join(args[2:], " "), err, stderr.String())
		}
		if got := strings.TrimSpace(string(out)); got != "Hello there." {
			t.Errorf("verbose=%v: stdout = %q, want the answer alone", verbose, got)
		}
		if r := srv.Requests(); len(r) != 1 || r[0].Thinking == 0 {
			t.Fatalf("requests = %+v, want one with thinking on", r)
		}
		printed := strings.Contains(stderr.String(), "otter: thinking: The person greets me; greet back.\n")
		if verbose && !printed {
			t.Errorf("with --verbose, stderr does not show the thinking:\n%s", stderr.String())
		}
		if !verbose && strings.Contains(stderr.String(), "greets") {
			t.Errorf("without --verbose, stderr shows thinking:\n%s", stderr.String())
		}
	}
}
