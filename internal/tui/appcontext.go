package tui

import (
	"context"

	"github.com/otter-sh/otter/internal/agent"
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
		out[i] = ModelChoice{Provider: c.Provider, Model: c.Model, Listed: c.Listed}
	}
	return out, err
}

func (b *AppBackend) SetModel(provider, model string) error { return b.app.SetModel(provider, model) }
