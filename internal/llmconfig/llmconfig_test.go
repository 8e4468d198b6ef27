package llmconfig_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/llmconfig"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func stream(t *testing.T, p llm.Provider, req llm.Request) (*llm.Response, []llm.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var evs []llm.Event
	resp, err := p.Stream(ctx, req, func(ev llm.Event) { evs = append(evs, ev) })
	return resp, evs, err
}

func hello(model string) llm.Request {
	return llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
}

// The help names the config file otter reads, $XDG_CONFIG_HOME included.
func TestHowToConfigureNamesTheUserConfigFile(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if want := filepath.Join(xdg, "otter", "config.toml"); !strings.Contains(llmconfig.HowToConfigure(), want) {
		t.Errorf("HowToConfigure does not name %s:\n%s", want, llmconfig.HowToConfigure())
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", xdg)
	if want := "~/.config/otter/config.toml"; !strings.Contains(llmconfig.HowToConfigure(), want) {
		t.Errorf("HowToConfigure does not name %s:\n%s", want, llmconfig.HowToConfigure())
	}
}

// The snippet shown to a user without a provider must work as it is for
// the local Ollama it names, where no OPENAI_API_KEY is set.
func TestHowToConfigureSnippetWorksAsWritten(t *testing.T) {
	var snippet []string
	for _, line := range strings.Split(llmconfig.HowToConfigure(), "\n") {
		line = strings.TrimSpace(line)
		if line == "[agent]" || len(snippet) > 0 {
			snippet = append(snippet, line)
		}
	}
	dir := t.TempDir()
	paths := config.Paths{ConfigDir: filepath.Join(dir, "config"), DataDir: filepath.Join(dir, "data"),
		StateDir: filepath.Join(dir, "state"), CacheDir: filepath.Join(dir, "cache")}
	if err := os.MkdirAll(paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths.ConfigDir, "config.toml"), []byte(strings.Join(snippet, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Paths: paths, WorkDir: dir, LookupEnv: env(nil)})
	if err != nil {
		t.Fatalf("the snippet of HowToConfigure does not load without OPENAI_API_KEY: %v\n%s", err, strings.Join(snippet, "\n"))
	}
	p, model, err := llmconfig.FromConfig(cfg, env(nil))
	if err != nil || p.Name() != "local" || model != "qwen3:8b" {
		t.Errorf("FromConfig = %v, %q, %v; want the local provider with qwen3:8b", p, model, err)
	}
}

func TestFromConfig(t *testing.T) {
	t.Run("nothing configured", func(t *testing.T) {
		_, _, err := llmconfig.FromConfig(&config.Config{}, env(nil))
		if !errors.Is(err, llm.ErrNoProvider) {
			t.Fatalf("err = %v, want ErrNoProvider", err)
		}
		for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "[providers.local]", `type = "openai"`, "base_url"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message lacks %q:\n%s", want, err)
			}
		}
	})
	t.Run("environment", func(t *testing.T) {
		p, model, err := llmconfig.FromConfig(nil, env(map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}))
		if err != nil || p.Name() != "anthropic" || model != llm.DefaultAnthropicModel {
			t.Errorf("both keys: %v %q %v, want anthropic", p, model, err)
		}
		// OPENAI_BASE_URL is honoured: the request reaches that server.
		srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
		p, model, err = llmconfig.FromConfig(&config.Config{Agent: config.Agent{Model: "m1"}},
			env(map[string]string{"OPENAI_API_KEY": "o-key", "OPENAI_BASE_URL": srv.URL}))
		if err != nil || p.Name() != "openai" || model != "m1" {
			t.Fatalf("openai from env: %v %q %v", p, model, err)
		}
		if _, _, err := stream(t, p, hello(model)); err != nil {
			t.Fatal(err)
		}
		if r := srv.Requests(); len(r) != 1 || r[0].Header.Get("Authorization") != "Bearer o-key" || r[0].Model != "m1" {
			t.Errorf("requests = %+v", r)
		}
	})
	// A [providers] table without base_url takes ANTHROPIC_BASE_URL or
	// OPENAI_BASE_URL (a proxy), as the provider picked from the
	// environment does; base_url in the table wins over it.
	t.Run("base URL variables under a table without base_url", func(t *testing.T) {
		for _, typ := range []string{llm.TypeAnthropic, llm.TypeOpenAI, llm.TypeOpenAIResponses} {
			kind, variable := llmtest.OpenAI, "OPENAI_BASE_URL"
			switch typ {
			case llm.TypeAnthropic:
				kind, variable = llmtest.Anthropic, "ANTHROPIC_BASE_URL"
			case llm.TypeOpenAIResponses:
				kind = llmtest.Responses
			}
			proxy := llmtest.New(t, kind, llmtest.Reply{Text: []string{"hi"}})
			table := llmtest.New(t, kind, llmtest.Reply{Text: []string{"hi"}})
			for _, base := range []string{"", table.URL} {
				cfg := &config.Config{Agent: config.Agent{Provider: "p"},
					Providers: map[string]config.Provider{"p": {Type: typ, BaseURL: base, APIKey: "k", Model: "m1"}}}
				p, model, err := llmconfig.FromConfig(cfg, env(map[string]string{variable: proxy.URL}))
				if err != nil {
					t.Fatalf("%s, base_url %q: %v", typ, base, err)
				}
				if _, _, err := stream(t, p, hello(model)); err != nil {
					t.Fatalf("%s, base_url %q: %v", typ, base, err)
				}
			}
			if len(proxy.Requests()) != 1 || len(table.Requests()) != 1 {
				t.Errorf("%s: %d requests at %s, %d at base_url; want one each", typ, len(proxy.Requests()), variable, len(table.Requests()))
			}
		}
	})
	t.Run("named provider", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Anthropic, llmtest.Reply{Text: []string{"hi"}})
		cfg := &config.Config{
			Agent: config.Agent{Provider: "claude"},
			Providers: map[string]config.Provider{"claude": {
				Type: "anthropic", BaseURL: srv.URL, APIKey: "k", Model: "claude-x", Headers: map[string]string{"X-Team": "otters"},
			}},
		}
		p, model, err := llmconfig.FromConfig(cfg, env(nil))
		if err != nil || p.Name() != "claude" || model != "claude-x" {
			t.Fatalf("got %v %q %v", p, model, err)
		}
		if _, _, err := stream(t, p, hello(model)); err != nil {
			t.Fatal(err)
		}
		if r := srv.Requests()[0]; r.Header.Get("X-Team") != "otters" || r.Header.Get("X-Api-Key") != "k" {
			t.Errorf("headers = %v", r.Header)
		}
	})
	t.Run("responses type", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Responses, llmtest.Reply{Text: []string{"hi"}})
		cfg := &config.Config{Agent: config.Agent{Provider: "oai"},
			Providers: map[string]config.Provider{"oai": {Type: "openai-responses", BaseURL: srv.URL, APIKey: "k", Model: "gpt-5"}}}
		p, model, err := llmconfig.FromConfig(cfg, env(nil))
		if err != nil || p.Name() != "oai" || model != "gpt-5" {
			t.Fatalf("got %v %q %v", p, model, err)
		}
		// The request reaches POST /v1/responses: the fake answers no other
		// route of this kind.
		if resp, _, err := stream(t, p, hello(model)); err != nil || resp.Text != "hi" {
			t.Fatalf("%+v, %v", resp, err)
		}
	})
	t.Run("one provider table without [agent]", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.OpenAI, llmtest.Reply{Text: []string{"hi"}})
		cfg := &config.Config{Providers: map[string]config.Provider{"local": {Type: "openai", BaseURL: srv.URL, Model: "qwen3:8b"}}}
		p, model, err := llmconfig.FromConfig(cfg, env(map[string]string{"ANTHROPIC_API_KEY": "from-env"}))
		if err != nil || p.Name() != "local" || model != "qwen3:8b" {
			t.Fatalf("got %v %q %v; want the only table, local, over the environment's key", p, model, err)
		}
		if _, _, err := stream(t, p, hello(model)); err != nil {
			t.Fatal(err)
		}
		if len(srv.Requests()) != 1 {
			t.Errorf("the configured server got %d requests", len(srv.Requests()))
		}
	})
	for _, tc := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"several provider tables without [agent]", config.Config{Providers: map[string]config.Provider{"b": {}, "a": {}}},
			"[providers] defines several (a, b); choose one with\n\n    [agent]\n    provider = \"a\""},
		{"missing table", config.Config{Agent: config.Agent{Provider: "nope"}, Providers: map[string]config.Provider{"local": {}}},
			`no [providers.nope] table (defined: local)`},
		{"unknown type", config.Config{Agent: config.Agent{Provider: "x"}, Providers: map[string]config.Provider{"x": {Type: "gemini"}}},
			`unknown type "gemini"`},
		{"compatible server without model", config.Config{Agent: config.Agent{Provider: "local"}, Providers: map[string]config.Provider{"local": {BaseURL: "http://localhost:11434/v1"}}},
			"set model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := llmconfig.FromConfig(&tc.cfg, env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFactsFromConfig(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{
		Providers: map[string]config.Provider{
			"ollama": {Type: "openai", ContextWindow: 32768, MaxOutputTokens: 4096,
				Models: map[string]config.ModelLimits{"big": {ContextWindow: 131072}}},
		},
		Pricing: map[string]config.Price{
			"qwen3:8b":     {Input: 0.1, Output: 0.2},
			"gpt-5.4-mini": {CachedInput: 0.05}, // only the cache price changes
		},
	}
	f := llmconfig.Facts(cfg, "ollama", "qwen3:8b")
	if !f.WindowKnown || f.ContextWindow != 32768 || f.MaxOutputTokens != 4096 {
		t.Errorf("provider-wide limits: %+v", f)
	}
	if !f.HasPrice || f.Price != (llm.Price{Input: 0.1, Output: 0.2, CachedInput: 0.1, CacheWrite: 0.1}) {
		t.Errorf("configured price: %+v", f.Price)
	}
	if f := llmconfig.Facts(cfg, "ollama", "big"); f.ContextWindow != 131072 || f.MaxOutputTokens != 4096 {
		t.Errorf("per-model window over the provider's: %+v", f)
	}
	if f := llmconfig.Facts(cfg, "openai", "gpt-5.4-mini"); f.Price != (llm.Price{Input: 0.75, Output: 4.5, CachedInput: 0.05, CacheWrite: 0.75}) {
		t.Errorf("[pricing] over the built-in price: %+v", f.Price)
	}
}
