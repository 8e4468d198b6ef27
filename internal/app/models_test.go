package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
)

// /model lists the model [agent] names for its provider, and what each
// OpenAI-compatible server serves, also one configured without a model
// (a base_url server has no default model to list, but can list its own).
func TestModelsOfConfiguredProviders(t *testing.T) {
	t.Parallel()
	local := llmtest.New(t, llmtest.OpenAI)
	local.Models = []string{"fake-model", "fake-model-large"}
	other := llmtest.New(t, llmtest.OpenAI)
	other.Models = []string{"llama3"}
	a := sessionApp(t, fmt.Sprintf(`
[agent]
provider = "local"
model = "fake-model"

[providers.local]
type = "openai"
base_url = %q
api_key = "k"

[providers.ollama]
type = "openai"
base_url = %q
`, local.URL, other.URL))
	got, err := a.Models(context.Background())
	if err != nil {
		t.Fatalf("Models: %v (got %+v)", err, got)
	}
	want := []ModelChoice{
		{Provider: "local", Model: "fake-model", Listed: true},
		{Provider: "local", Model: "fake-model-large", Listed: true},
		{Provider: "ollama", Model: "llama3", Listed: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Models = %+v\nwant %+v", got, want)
	}
}
