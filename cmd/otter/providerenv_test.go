package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/testpeer"
)

// `--provider openai` and `--provider anthropic` send the request, with
// the key, to OPENAI_BASE_URL / ANTHROPIC_BASE_URL, as otter does when it
// picks the provider from the environment itself (issue 34, item 12).
// Before, a provider chosen by name went to the public API: the user's
// proxy never saw the request, and the key left for api.openai.com.
func TestProviderByNameHonoursBaseURLVariables(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	for _, c := range []struct {
		provider string
		kind     llmtest.Kind
		keyVar   string
		baseVar  string
		model    string
	}{
		{"openai", llmtest.OpenAI, "OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-4.1"},
		{"anthropic", llmtest.Anthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "claude-sonnet-4-6"},
	} {
		t.Run(c.provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.New(t, c.kind, llmtest.Reply{Text: []string{"Hello from the proxy."}})
			env, home := testHomeEnv(t)
			env = slices.DeleteFunc(env, func(kv string) bool {
				k, _, _ := strings.Cut(kv, "=")
				return strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "OTTER_")
			})
			env = append(env, c.keyVar+"=proxy-key-0123", c.baseVar+"="+srv.URL)
			args := []string{"-p", "hello", "--provider", c.provider, "--model", c.model}
			cmd := exec.Command(bin, args...)
			cmd.Env, cmd.Dir = env, home
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), "Hello from the proxy.") {
				t.Fatalf("otter %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr.String())
			}
			r := srv.Requests()
			if len(r) != 1 {
				t.Fatalf("the server at %s got %d requests, want 1", c.baseVar, len(r))
			}
			auth := r[0].Header.Get("Authorization") + r[0].Header.Get("X-Api-Key")
			if !strings.Contains(auth, "proxy-key-0123") {
				t.Errorf("the request carried %q, want the key from %s", auth, c.keyVar)
			}
		})
	}
}
