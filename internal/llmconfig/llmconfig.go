// Package llmconfig builds what the llm package needs from otter's config
// file: the model provider [agent] and [providers] name, and a model's
// facts with [providers] limits and [pricing] laid over the built-in
// table. It keeps llm (and the agent above it) free of the config file.
package llmconfig

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
)

// HowToConfigure returns the text that explains how to configure a
// provider, naming the user's config file ($XDG_CONFIG_HOME honoured).
func HowToConfigure() string {
	return strings.Replace(howToConfigure, "USER_CONFIG", config.DefaultPaths().ShortUserConfigFile(), 1)
}

const howToConfigure = `To chat, otter needs a model provider. Either set an API key in the environment:

    export ANTHROPIC_API_KEY=...      # Anthropic (Claude)
    export OPENAI_API_KEY=...         # OpenAI
                                      # (ANTHROPIC_BASE_URL, OPENAI_BASE_URL for a proxy)

or configure one in USER_CONFIG (or .otter/config.toml), e.g. a local Ollama:

    [agent]
    provider = "local"
    model = "qwen3:8b"

    [providers.local]
    type = "openai"                   # or "openai-responses", "anthropic"
    base_url = "http://localhost:11434/v1"
    api_key = "${OPENAI_API_KEY:-ollama}"   # Ollama needs no key`

// FromConfig returns the provider named by [agent].provider and the model
// to use. With no [agent].provider it uses the only [providers] table when
// there is exactly one; with none it picks Anthropic when ANTHROPIC_API_KEY
// is set, else OpenAI when OPENAI_API_KEY is set; with neither it returns
// an error wrapping llm.ErrNoProvider whose message explains how to
// configure one. ANTHROPIC_BASE_URL and OPENAI_BASE_URL (a proxy) apply
// to every provider of their API that sets no base_url, however it was
// chosen (a provider chosen by name comes here as such a table).
// lookupEnv nil means os.LookupEnv.
func FromConfig(cfg *config.Config, lookupEnv func(string) (string, bool)) (llm.Provider, string, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	env := func(k string) string {
		v, _ := lookupEnv(k)
		return strings.TrimSpace(v)
	}
	var agent config.Agent
	if cfg != nil {
		agent = cfg.Agent
	}
	if agent.Provider == "" && cfg != nil && len(cfg.Providers) > 0 {
		// A [providers.X] table without [agent] provider: one table is
		// plainly the one meant; among several, say which to choose.
		names := slices.Sorted(maps.Keys(cfg.Providers))
		if len(names) > 1 {
			return nil, "", fmt.Errorf("%w: [providers] defines several (%s); choose one with\n\n    [agent]\n    provider = %q",
				llm.ErrNoProvider, strings.Join(names, ", "), names[0])
		}
		agent.Provider = names[0]
	}
	if agent.Provider == "" {
		var p llm.Provider
		model := agent.Model
		switch {
		case env("ANTHROPIC_API_KEY") != "":
			p = llm.NewAnthropic(llm.Options{Name: "anthropic", APIKey: env("ANTHROPIC_API_KEY"), BaseURL: envBaseURL(llm.TypeAnthropic, "", env)})
			if model == "" {
				model = llm.DefaultAnthropicModel
			}
		case env("OPENAI_API_KEY") != "":
			p = llm.NewOpenAI(llm.Options{Name: "openai", APIKey: env("OPENAI_API_KEY"), BaseURL: envBaseURL(llm.TypeOpenAI, "", env)})
			if model == "" {
				model = llm.DefaultOpenAIModel
			}
		default:
			return nil, "", fmt.Errorf("%w.\n\n%s", llm.ErrNoProvider, HowToConfigure())
		}
		return p, model, nil
	}

	var names []string
	var pc config.Provider
	found := false
	if cfg != nil {
		for n := range cfg.Providers {
			names = append(names, n)
		}
		pc, found = cfg.Providers[agent.Provider]
	}
	if !found {
		sort.Strings(names)
		known := "none are defined"
		if len(names) > 0 {
			known = "defined: " + strings.Join(names, ", ")
		}
		return nil, "", fmt.Errorf("%w: [agent] provider = %q but there is no [providers.%s] table (%s).\n\n%s",
			llm.ErrNoProvider, agent.Provider, agent.Provider, known, HowToConfigure())
	}
	if pc.Problem != nil {
		return nil, "", fmt.Errorf("[providers.%s] cannot be used: %w", agent.Provider, pc.Problem)
	}
	model := agent.Model
	if model == "" {
		model = pc.Model
	}
	switch pc.Type {
	case llm.TypeAnthropic:
		key := pc.APIKey
		if key == "" {
			key = env("ANTHROPIC_API_KEY")
		}
		if model == "" {
			model = llm.DefaultAnthropicModel
		}
		return llm.NewAnthropic(llm.Options{Name: agent.Provider, BaseURL: envBaseURL(pc.Type, pc.BaseURL, env), APIKey: key, Headers: pc.Headers}), model, nil
	case llm.TypeOpenAI, llm.TypeOpenAIResponses, "":
		key := pc.APIKey
		base := pc.BaseURL
		if key == "" && base == "" {
			key = env("OPENAI_API_KEY")
		}
		if model == "" {
			if base != "" {
				return nil, "", fmt.Errorf("[providers.%s]: set model (here or in [agent]): a server at %s has no default model", agent.Provider, base)
			}
			model = llm.DefaultOpenAIModel
		}
		opts := llm.Options{Name: agent.Provider, BaseURL: envBaseURL(pc.Type, base, env), APIKey: key, Headers: pc.Headers}
		if pc.Type == llm.TypeOpenAIResponses {
			return llm.NewResponses(opts), model, nil
		}
		return llm.NewOpenAI(opts), model, nil
	default:
		return nil, "", fmt.Errorf("[providers.%s]: unknown type %q (use %q, %q or %q)", agent.Provider, pc.Type, llm.TypeOpenAI, llm.TypeOpenAIResponses, llm.TypeAnthropic)
	}
}

// envBaseURL is the base URL of an API of type typ: configured, else
// ANTHROPIC_BASE_URL or OPENAI_BASE_URL (a proxy), else "" (the public
// API). It holds however the provider was chosen: picked from the
// environment, named by [agent] or chosen by name at the command line.
func envBaseURL(typ, configured string, env func(string) string) string {
	if configured != "" {
		return configured
	}
	if typ == llm.TypeAnthropic {
		return env("ANTHROPIC_BASE_URL")
	}
	return env("OPENAI_BASE_URL") // openai, openai-responses, "" (openai)
}

// Facts returns what otter knows of model as served by the provider
// configured as [providers.provider]: the built-in table, overridden by
// the provider's context_window / max_output_tokens, overridden by
// [providers.provider.models."model"], and the price from [pricing."model"]
// over the built-in one. cfg may be nil.
func Facts(cfg *config.Config, provider, model string) llm.ModelFacts {
	return llm.Facts(Configured(cfg, provider, model), model)
}

// Configured is what cfg says of model as served by provider, for
// llm.Facts.
func Configured(cfg *config.Config, provider, model string) llm.Configured {
	var c llm.Configured
	if cfg == nil {
		return c
	}
	if pc, ok := cfg.Providers[provider]; ok {
		c.Limits = append(c.Limits, llm.Limits{ContextWindow: pc.ContextWindow, MaxOutputTokens: pc.MaxOutputTokens})
		if l, ok := pc.Models[model]; ok {
			c.Limits = append(c.Limits, llm.Limits{ContextWindow: l.ContextWindow, MaxOutputTokens: l.MaxOutputTokens})
		}
	}
	if len(cfg.Pricing) > 0 {
		c.Pricing = make(map[string]llm.Price, len(cfg.Pricing))
		for name, p := range cfg.Pricing {
			c.Pricing[name] = llm.Price{Input: p.Input, Output: p.Output, CachedInput: p.CachedInput, CacheWrite: p.CacheWrite}
		}
	}
	return c
}
