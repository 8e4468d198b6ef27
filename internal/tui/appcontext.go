package tui

import (
	"context"
	"fmt"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/llm"
)

// AppBackend's ContextBackend methods, over the agent and the App.

func (b *AppBackend) Context() agent.ContextState { return b.conv.Context() }
func (b *AppBackend) Costs() []agent.ModelUsage   { return b.conv.Costs() }

// SaveNotice implements NoticeSaver.
func (b *AppBackend) SaveNotice(text string) { b.conv.SaveNotice(text) }

func (b *AppBackend) Compact(ctx context.Context, keep string, emit func(agent.Event)) error {
	return b.conv.Compact(ctx, keep, emit)
}

func (b *AppBackend) Models(ctx context.Context) ([]ModelChoice, error) {
	list, err := b.app.Models(ctx)
	out := make([]ModelChoice, len(list))
	for i, c := range list {
		f := b.app.Facts(c.Provider, c.Model)
		out[i] = ModelChoice{Provider: c.Provider, Model: c.Model, Listed: c.Listed, HasPrice: f.HasPrice,
			InPrice: f.Price.Input, OutPrice: f.Price.Output}
		if f.WindowKnown {
			out[i].Window = f.ContextWindow
		}
	}
	return out, err
}

func (b *AppBackend) SetModel(provider, model string) error { return b.app.SetModel(provider, model) }

func (b *AppBackend) LearnWindow(ctx context.Context) { b.conv.LearnWindow(ctx) }

// Thinking is the reasoning level as the config writes it.
func (b *AppBackend) Thinking() string { return thinkingText(b.app.Thinking()) }

func (b *AppBackend) SetThinking(level string) error {
	t, err := llm.ParseThinking(level)
	if err != nil {
		return fmt.Errorf("could not set the reasoning level: %w", err)
	}
	b.app.SetThinking(t)
	return nil
}

// thinkingText is t as the config writes it: off, low, medium, high, or a
// budget in tokens.
func thinkingText(t llm.Thinking) string {
	switch {
	case t.Budget > 0:
		return fmt.Sprintf("%d-token thinking budget", t.Budget)
	case t.On():
		return t.Effort
	}
	return llm.ThinkingOff
}
