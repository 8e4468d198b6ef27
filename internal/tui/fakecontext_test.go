package tui

import (
	"cmp"
	"context"
	"fmt"

	"github.com/otter-sh/otter/internal/agent"
)

// The fake backend's model, window and cost.

func (f *fakeBackend) Context() agent.ContextState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ctxState
}

func (f *fakeBackend) Costs() []agent.ModelUsage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.costs
}

func (f *fakeBackend) Compact(ctx context.Context, keep string, emit func(agent.Event)) error {
	f.record("compact " + keep)
	if f.compact != nil {
		return f.compact(ctx, keep, emit)
	}
	return nil
}

func (f *fakeBackend) Models(context.Context) ([]ModelChoice, error) {
	return []ModelChoice{{Provider: "anthropic", Model: "claude-sonnet-4-6", Listed: true}, {Provider: "local", Model: "qwen3:8b"}}, nil
}

func (f *fakeBackend) LearnWindow(context.Context) {}

func (f *fakeBackend) SetModel(provider, model string) error {
	if provider != "anthropic" && provider != "local" {
		return fmt.Errorf("no provider %q", provider)
	}
	f.record("model " + provider + "/" + model)
	f.mu.Lock()
	f.provider = Provider{Name: provider, Model: model}
	f.mu.Unlock()
	return nil
}

func (f *fakeBackend) Thinking() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cmp.Or(f.thinking, "off")
}

func (f *fakeBackend) SetThinking(level string) error {
	f.record("thinking " + level)
	f.mu.Lock()
	f.thinking = level
	f.mu.Unlock()
	return nil
}
