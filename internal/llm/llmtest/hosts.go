package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Host is the server an OpenAI-protocol fake pretends to be, for what it
// says of its models beyond the protocol: their context windows.
type Host string

const (
	// HostOpenAI lists models as OpenAI does: ids only.
	HostOpenAI Host = ""
	// HostOllama also answers Ollama's POST /api/show (model_info's
	// <arch>.context_length, and num_ctx in parameters when NumCtx names
	// the model) and GET /api/tags.
	HostOllama Host = "ollama"
	// HostVLLM lists max_model_len with each model of /v1/models.
	HostVLLM Host = "vllm"
	// HostLMStudio answers LM Studio's GET /api/v0/models with
	// max_context_length and, for a loaded model, loaded_context_length.
	HostLMStudio Host = "lmstudio"
	// HostOpenRouter lists context_length and pricing (US dollars per
	// token, as strings) with each model of /v1/models.
	HostOpenRouter Host = "openrouter"
)

// ModelInfo is what a Host says of one model.
type ModelInfo struct {
	// Window is the model's context length (Ollama's model_info, vLLM's
	// max_model_len, OpenRouter's context_length, LM Studio's
	// max_context_length).
	Window int
	// Loaded is the context length a loaded model runs with: Ollama's
	// num_ctx parameter, LM Studio's loaded_context_length (0: not said).
	Loaded int
	// Input and Output are prices in US dollars per million tokens
	// (OpenRouter).
	Input, Output float64
}

// modelNames is the models a host lists: Models, then those of Info.
func (s *Server) modelNames() []string {
	names := append([]string(nil), s.Models...)
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	var extra []string
	for n := range s.Info {
		if !seen[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

// serveHost answers the host's own endpoints; it reports whether it did.
func (s *Server) serveHost(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case s.Host == HostOllama && r.Method == http.MethodPost && r.URL.Path == "/api/show":
		var in struct {
			Model string `json:"model"`
			Name  string `json:"name"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		name := in.Model
		if name == "" {
			name = in.Name
		}
		s.count("show " + name)
		info, ok := s.Info[name]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"model '%s' not found"}`+"\n", name)
			return true
		}
		params := "stop                           \"<|im_end|>\"\ntemperature                    0.7"
		if info.Loaded > 0 {
			params = fmt.Sprintf("num_ctx                        %d\n", info.Loaded) + params
		}
		writeJSON(w, map[string]any{
			"license": "", "modelfile": "FROM " + name, "parameters": params, "template": "{{ .Prompt }}",
			"details": map[string]any{"format": "gguf", "family": "qwen3", "parameter_size": "8.2B", "quantization_level": "Q4_K_M"},
			"model_info": map[string]any{
				"general.architecture": "qwen3", "general.parameter_count": 8190735360,
				"qwen3.context_length": info.Window, "qwen3.embedding_length": 4096,
			},
			"capabilities": []string{"completion", "tools"},
			"modified_at":  "2026-01-01T00:00:00Z",
		})
		return true
	case s.Host == HostOllama && r.Method == http.MethodGet && r.URL.Path == "/api/tags":
		s.count("tags")
		models := []any{}
		for _, n := range s.modelNames() {
			models = append(models, map[string]any{"name": n, "model": n, "modified_at": "2026-01-01T00:00:00Z", "size": 5225388164,
				"digest": "500a1f067a9f", "details": map[string]any{"format": "gguf", "family": "qwen3", "parameter_size": "8.2B", "quantization_level": "Q4_K_M"}})
		}
		writeJSON(w, map[string]any{"models": models})
		return true
	case s.Host == HostLMStudio && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v0/models"):
		s.count("lmstudio models")
		model := func(n string) map[string]any {
			info := s.Info[n]
			m := map[string]any{"id": n, "object": "model", "type": "llm", "publisher": "llmtest", "arch": "qwen3",
				"compatibility_type": "gguf", "quantization": "Q4_K_M", "state": "not-loaded", "max_context_length": info.Window}
			if info.Loaded > 0 {
				m["state"], m["loaded_context_length"] = "loaded", info.Loaded
			}
			return m
		}
		if n := strings.TrimPrefix(r.URL.Path, "/api/v0/models/"); n != r.URL.Path && n != "" {
			writeJSON(w, model(n))
			return true
		}
		data := []any{}
		for _, n := range s.modelNames() {
			data = append(data, model(n))
		}
		writeJSON(w, map[string]any{"object": "list", "data": data})
		return true
	}
	return false
}

// openAIModel is one entry of /v1/models as the host lists it.
func (s *Server) openAIModel(n string) map[string]any {
	m := map[string]any{"id": n, "object": "model", "created": 1700000000, "owned_by": "llmtest"}
	info, ok := s.Info[n]
	if !ok {
		return m
	}
	switch s.Host {
	case HostVLLM:
		m["owned_by"], m["root"], m["parent"], m["max_model_len"] = "vllm", n, nil, info.Window
	case HostOpenRouter:
		m["name"], m["context_length"] = n, info.Window
		m["pricing"] = map[string]any{"prompt": fmt.Sprintf("%.10f", info.Input/1e6), "completion": fmt.Sprintf("%.10f", info.Output/1e6)}
		m["top_provider"] = map[string]any{"context_length": info.Window, "is_moderated": false}
	}
	return m
}

// count records a request to a host endpoint, for HostCalls.
func (s *Server) count(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hostCalls == nil {
		s.hostCalls = map[string]int{}
	}
	s.hostCalls[what]++
}

// HostCalls returns how many times each host endpoint was asked
// ("show MODEL", "tags", "lmstudio models", "models").
func (s *Server) HostCalls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.hostCalls {
		out[k] = v
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
