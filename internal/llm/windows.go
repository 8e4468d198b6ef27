package llm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// A WindowProber is a Provider whose server can say a model's context
// window: OpenAI-compatible servers that list it with their models (vLLM's
// max_model_len, OpenRouter's context_length, LM Studio's
// loaded_context_length) or answer Ollama's /api/show.
type WindowProber interface {
	ProbeWindow(ctx context.Context, model string) (LearnedWindow, error)
}

// LearnedWindow is a context window a provider stated.
type LearnedWindow struct {
	Tokens int
	// Source says who said it ("ollama num_ctx", "vllm max_model_len",
	// "the provider's refusal", ...), for people.
	Source string
}

// probeTimeout bounds each question ProbeWindow asks.
const probeTimeout = 5 * time.Second

// ErrNoWindow is returned by ProbeWindow when the server said nothing of
// the model's window.
var ErrNoWindow = errors.New("the server does not say the model's context window")

// ProbeWindow implements WindowProber for compatible servers (the official
// API says nothing: its models are in the built-in table). It asks, in
// order, the models list (vLLM, OpenRouter, LM Studio), Ollama's
// /api/show (num_ctx the model runs with, else its context length) and LM
// Studio's /api/v0/models.
func (p *OpenAI) ProbeWindow(ctx context.Context, model string) (LearnedWindow, error) {
	if p.official {
		return LearnedWindow{}, ErrNoWindow
	}
	noRetry := option.WithMaxRetries(0)
	ask := func(method, base, path string, body, out any) error {
		c, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		opts := []option.RequestOption{noRetry}
		if base != "" {
			opts = append(opts, option.WithBaseURL(base))
		}
		return p.client.Execute(c, method, path, body, out, opts...)
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := ask("GET", "", "models", nil, &list); err == nil {
		for _, m := range list.Data {
			if id, _ := m["id"].(string); id != model {
				continue
			}
			if w := listedWindow(m); w.Tokens > 0 {
				return w, nil
			}
		}
	} else if ctx.Err() != nil {
		return LearnedWindow{}, ctx.Err()
	}
	root := strings.TrimSuffix(strings.TrimRight(p.base, "/"), "/v1") + "/"
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if err := ask("POST", root, "api/show", map[string]string{"model": model}, &show); err == nil {
		if w := ollamaWindow(show.Parameters, show.ModelInfo); w.Tokens > 0 {
			return w, nil
		}
	} else if ctx.Err() != nil {
		return LearnedWindow{}, ctx.Err()
	}
	var lm map[string]any
	if err := ask("GET", root, "api/v0/models/"+model, nil, &lm); err == nil {
		if w := listedWindow(lm); w.Tokens > 0 {
			return w, nil
		}
	}
	return LearnedWindow{}, ErrNoWindow
}

// numCtxRE finds num_ctx in the parameters text of Ollama's /api/show.
var numCtxRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*num_ctx\s+(\d+)`) })

// ollamaWindow reads /api/show: the num_ctx the model runs with when its
// Modelfile sets one, else the model's context length.
func ollamaWindow(params string, info map[string]any) LearnedWindow {
	if m := numCtxRE().FindStringSubmatch(params); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 {
			return LearnedWindow{Tokens: n, Source: "Ollama's num_ctx"}
		}
	}
	for k, v := range info {
		if strings.HasSuffix(k, ".context_length") {
			if n := number(v); n > 0 {
				return LearnedWindow{Tokens: n, Source: "Ollama's context length"}
			}
		}
	}
	return LearnedWindow{}
}

// listedWindow reads the window from a model as a models list gives it.
func listedWindow(m map[string]any) LearnedWindow {
	for _, k := range []struct{ key, source string }{
		{"loaded_context_length", "LM Studio's loaded context length"},
		{"max_model_len", "vLLM's max_model_len"},
		{"context_length", "the models list's context_length"},
		{"max_context_length", "LM Studio's max context length"},
	} {
		if n := number(m[k.key]); n > 0 {
			return LearnedWindow{Tokens: n, Source: k.source}
		}
	}
	if tp, ok := m["top_provider"].(map[string]any); ok {
		if n := number(tp["context_length"]); n > 0 {
			return LearnedWindow{Tokens: n, Source: "the models list's context_length"}
		}
	}
	return LearnedWindow{}
}

func number(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	case string:
		i, _ := strconv.Atoi(n)
		return i
	}
	return 0
}

// WindowCache keeps the windows providers stated, per provider and model,
// in memory and, when it has a file, on disk, so that the next run knows
// them before its first request.
type WindowCache struct {
	path string
	mu   sync.Mutex
	m    map[string]cachedWindow
}

type cachedWindow struct {
	Tokens  int       `json:"tokens"`
	Source  string    `json:"source"`
	Learned time.Time `json:"learned"`
}

// NewWindowCache returns a cache kept in the file at path ("" = in memory
// only). A file that cannot be read starts an empty cache.
func NewWindowCache(path string) *WindowCache {
	c := &WindowCache{path: path, m: map[string]cachedWindow{}}
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			_ = json.Unmarshal(b, &c.m)
		}
	}
	return c
}

func windowKey(provider, model string) string { return provider + " " + model }

// Get returns the window learned for provider's model.
func (c *WindowCache) Get(provider, model string) (LearnedWindow, bool) {
	if c == nil {
		return LearnedWindow{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.m[windowKey(provider, model)]
	return LearnedWindow{Tokens: w.Tokens, Source: w.Source}, ok && w.Tokens > 0
}

// Put records a learned window and saves the cache; a failure to save is
// returned but the window is kept in memory.
func (c *WindowCache) Put(provider, model string, w LearnedWindow) error {
	if c == nil || w.Tokens <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[windowKey(provider, model)] = cachedWindow{Tokens: w.Tokens, Source: w.Source, Learned: time.Now().UTC()}
	if c.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(c.m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.path)
}
