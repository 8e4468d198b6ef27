package llm_test

import (
	"math"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/llm"
	"github.com/otter-sh/otter/internal/llm/llmtest"
)

func TestFactsOfWellKnownModels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model           string
		window, output  int
		input, outPrice float64
	}{
		{"claude-sonnet-4-5-20250929", 200_000, 64_000, 3, 15},
		{"claude-sonnet-4-6", 1_000_000, 128_000, 3, 15},
		{"anthropic/claude-haiku-4-5", 200_000, 64_000, 1, 5}, // a router's vendor prefix
		{"gpt-5.4-mini-2026-03-17", 400_000, 128_000, 0.75, 4.5},
		{"gpt-4o", 128_000, 16_384, 2.5, 10},
	} {
		f := llm.Facts(llm.Configured{}, tc.model)
		if !f.WindowKnown || f.ContextWindow != tc.window || f.MaxOutputTokens != tc.output {
			t.Errorf("%s: window %d (known %v), output %d; want %d, %d", tc.model, f.ContextWindow, f.WindowKnown, f.MaxOutputTokens, tc.window, tc.output)
		}
		if !f.HasPrice || f.Price.Input != tc.input || f.Price.Output != tc.outPrice {
			t.Errorf("%s: price %+v (known %v), want %v/%v", tc.model, f.Price, f.HasPrice, tc.input, tc.outPrice)
		}
	}
	// A newer model of a known family: its family's window, no price.
	if f := llm.Facts(llm.Configured{}, "claude-opus-9"); !f.WindowKnown || f.ContextWindow != 200_000 || f.HasPrice {
		t.Errorf("unknown Claude model: %+v", f)
	}
}

func TestFactsOfALocalModelAskForTheFigure(t *testing.T) {
	t.Parallel()
	f := llm.Facts(llm.Configured{}, "qwen3:8b")
	if f.WindowKnown || f.ContextWindow != llm.DefaultContextWindow || f.MaxOutputTokens <= 0 || f.MaxOutputTokens >= f.ContextWindow || f.HasPrice {
		t.Fatalf("facts = %+v, want the conservative default and no price", f)
	}
	note := f.MissingWindowNotice("ollama")
	for _, want := range []string{`"qwen3:8b"`, "8192", "[providers.ollama]", "context_window = N"} {
		if !strings.Contains(note, want) {
			t.Errorf("notice %q does not say %q", note, want)
		}
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	p := llm.Facts(llm.Configured{}, "claude-sonnet-4-5").Price
	// 1M input of which 600k read from the cache and 100k written to it,
	// and 100k output.
	u := llm.Usage{InputTokens: 1_000_000, CachedTokens: 600_000, CacheWriteTokens: 100_000, OutputTokens: 100_000}
	want := 0.3*3 + 0.6*0.3 + 0.1*3.75 + 0.1*15
	if got := p.Cost(u); math.Abs(got-want) > 1e-9 {
		t.Errorf("cost = %v, want %v", got, want)
	}
}

// Both SDKs' usage objects reach llm.Usage with the cached tokens, counted
// the same way: InputTokens is the whole prompt.
func TestUsageCountsCachedTokens(t *testing.T) {
	t.Parallel()
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			reply := llmtest.Reply{Text: []string{"hi"}, InputTokens: 1000, CachedTokens: 800, OutputTokens: 5}
			want := llm.Usage{InputTokens: 1000, CachedTokens: 800, OutputTokens: 5}
			if kind == llmtest.Anthropic {
				reply.CacheWriteTokens = 150
				want.CacheWriteTokens = 150
			}
			srv := llmtest.New(t, kind, reply)
			resp, _, err := stream(t, srv.Provider(), hello("m"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, want)
			}
		})
	}
}

func TestProvidersListTheirModels(t *testing.T) {
	t.Parallel()
	for _, kind := range llmtest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			srv := llmtest.New(t, kind)
			srv.Models = []string{"model-b", "model-a"}
			lister, ok := srv.Provider().(llm.ModelLister)
			if !ok {
				t.Fatalf("%T lists no models", srv.Provider())
			}
			got, err := lister.Models(t.Context())
			if err != nil || len(got) != 2 {
				t.Fatalf("models = %v, %v", got, err)
			}
		})
	}
}
