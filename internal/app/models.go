package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llmconfig"
)

// listTimeout bounds one provider's answer to a model list.
const listTimeout = 10 * time.Second

// ModelChoice is a model of a configured provider.
type ModelChoice struct {
	Provider string // the [providers.NAME] key, or the provider otter picked from the environment
	Model    string
	// Listed: the provider's API listed it; else it is the configured
	// model only.
	Listed bool
}

// Facts returns what otter knows of a provider's model under the current
// configuration: [providers] limits and [pricing] over the built-in table.
func (a *App) Facts(provider, model string) llm.ModelFacts {
	a.llm.mu.Lock()
	cfg := a.llm.cfg
	a.llm.mu.Unlock()
	return llmconfig.Facts(cfg, provider, model)
}

// providerNamed builds the provider [providers.name] configures, with
// model (or the provider's configured one when model is "").
func (a *App) providerNamed(cfg *config.Config, name, model string) (llm.Provider, string, error) {
	c := *cfg
	c.Agent.Provider, c.Agent.Model = name, model
	if _, ok := cfg.Providers[name]; !ok && len(cfg.Providers) == 0 {
		c.Agent.Provider = "" // the provider picked from the environment
	}
	return llmconfig.FromConfig(&c, a.opts.LookupEnv)
}

// Models lists the models of every configured provider: each one's
// configured model, and what its API lists where it lists any. Providers
// that could not be asked are named in the error, next to what the others
// gave.
func (a *App) Models(ctx context.Context) ([]ModelChoice, error) {
	cfg := a.Config()
	names := slices.Sorted(maps.Keys(cfg.Providers))
	if len(names) == 0 {
		if p, _, err := a.Provider(); err == nil {
			names = []string{p.Name()}
		}
	}
	var out []ModelChoice
	var errs []error
	for _, name := range names {
		configured := "" // the provider's own model, or [agent]'s for its provider
		if name == cfg.Agent.Provider {
			configured = cfg.Agent.Model
		}
		p, model, err := a.providerNamed(cfg, name, configured)
		if err != nil && configured == "" && cfg.Providers[name].Model == "" {
			// A server that has no default model (base_url, no model
			// set) can still list what it serves.
			p, _, err = a.providerNamed(cfg, name, "?")
			model = ""
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		seen := map[string]bool{}
		if model != "" {
			seen[model] = true
			out = append(out, ModelChoice{Provider: name, Model: model})
		}
		lister, ok := p.(llm.ModelLister)
		if !ok {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		listed, err := lister.Models(lctx)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("listing the models of %s: %w", name, err))
			continue
		}
		for _, m := range listed {
			if m == model {
				for i := range out {
					if out[i].Provider == name && out[i].Model == m {
						out[i].Listed = true
					}
				}
			}
			if !seen[m] {
				seen[m] = true
				out = append(out, ModelChoice{Provider: name, Model: m, Listed: true})
			}
		}
	}
	return out, errors.Join(errs...)
}

// SetModel switches every agent NewAgent built, and what Provider returns,
// to model of the provider [providers.provider] configures; conversations
// continue. The choice holds across reloads of the configuration.
//
// Switching to another provider takes that provider's settings: its
// reasoning level ([providers.NAME] thinking), even over a level set with
// SetThinking, which was chosen for the provider left behind (an effort
// for one API, a token budget for another). Another model of the same
// provider keeps the level in use.
func (a *App) SetModel(provider, model string) error {
	p, m, err := a.providerNamed(a.Config(), provider, model)
	if err != nil {
		return err
	}
	if m == "" {
		return fmt.Errorf("no model named for %s", provider)
	}
	a.llm.mu.Lock()
	defer a.llm.mu.Unlock()
	if a.llm.provider == nil || a.llm.provider.Name() != p.Name() {
		a.llm.thinking = nil
	}
	a.llm.chosen = &ModelChoice{Provider: provider, Model: m}
	a.llm.provider, a.llm.model, a.llm.err = p, m, nil
	thinking := a.thinkingOf(a.llm.cfg, p)
	for _, b := range a.llm.agents {
		b.agent.SetProvider(p, m)
		b.agent.SetThinking(thinking)
	}
	return nil
}

// SetThinking sets the reasoning level of every agent NewAgent built, over
// the configuration's, for the rest of the run.
func (a *App) SetThinking(t llm.Thinking) {
	a.llm.mu.Lock()
	defer a.llm.mu.Unlock()
	a.llm.thinking = &t
	for _, b := range a.llm.agents {
		b.agent.SetThinking(t)
	}
}

// Thinking returns the reasoning level agents use with the current
// provider.
func (a *App) Thinking() llm.Thinking {
	a.llm.mu.Lock()
	defer a.llm.mu.Unlock()
	return a.thinkingOf(a.llm.cfg, a.llm.provider)
}
