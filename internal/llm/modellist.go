package llm

import (
	"context"
	"slices"

	"github.com/anthropics/anthropic-sdk-go"
)

// A ModelLister is a Provider whose API lists the models it serves (both
// the OpenAI and the Anthropic APIs do; so do Ollama, vLLM and most
// compatible servers).
type ModelLister interface {
	Models(ctx context.Context) ([]string, error)
}

// Models implements ModelLister: GET /models, sorted by name.
func (p *OpenAI) Models(ctx context.Context) ([]string, error) {
	var out []string
	it := p.client.Models.ListAutoPaging(ctx)
	for it.Next() {
		out = append(out, it.Current().ID)
	}
	if err := it.Err(); err != nil {
		return nil, p.wrapErr(ctx, err)
	}
	slices.Sort(out)
	return out, nil
}

// Models implements ModelLister: GET /v1/models, newest first as the API
// lists them.
func (p *Anthropic) Models(ctx context.Context) ([]string, error) {
	var out []string
	it := p.client.Models.ListAutoPaging(ctx, anthropic.ModelListParams{})
	for it.Next() {
		out = append(out, it.Current().ID)
	}
	if err := it.Err(); err != nil {
		return nil, p.wrapErr(ctx, err)
	}
	return out, nil
}
