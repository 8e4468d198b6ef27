// Package registrytest is an MCP Registry for tests: an httptest server
// that speaks the registry's REST API v0.1 (GET /v0.1/servers with search,
// limit and cursor pagination; GET /v0.1/servers/{name}/versions/latest),
// with cache headers and ETags, serving real server.json documents — the
// entries the reference servers and their successors publish:
//
//   - everything.json, filesystem.json, time.json: modelcontextprotocol/servers
//     src/*/server.json (npm with a fixed argument and an HTTP variant; npm
//     with a required, repeated path argument; PyPI);
//   - brave-search.json: brave/brave-search-mcp-server's server.json (npm
//     with a required secret environment variable), the reference
//     brave-search server's successor;
//   - github.json: github/github-mcp-server's server.json, ${VERSION}
//     filled in as its release workflow does (an OCI image and a remote
//     with a secret header).
//
// It is imported by tests only.
package registrytest

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed testdata/*.json
var docs embed.FS

// Published is when the test registry says every server was published.
var Published = time.Date(2026, 1, 12, 9, 30, 0, 0, time.UTC)

// Server is the test registry.
type Server struct {
	URL string
	// PageSize caps the servers of one page, whatever limit a request
	// asks (default 2, so that a search of the five servers takes pages).
	PageSize int
	// CacheControl is the Cache-Control header of every answer ("" sends
	// none).
	CacheControl string

	srv     *httptest.Server
	mu      sync.Mutex
	servers []json.RawMessage // server.json documents, by name
	names   []string
	reqs    []string
}

// New starts the test registry serving the embedded documents, with
// Cache-Control "max-age=60".
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{PageSize: 2, CacheControl: "max-age=60"}
	files, err := docs.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := docs.ReadFile("testdata/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Name string }
		if err := json.Unmarshal(data, &head); err != nil || head.Name == "" {
			t.Fatalf("testdata/%s: %v", f.Name(), err)
		}
		s.names = append(s.names, head.Name)
		s.servers = append(s.servers, data)
	}
	// By name, as the registry lists them.
	idx := make([]int, len(s.names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(s.names[a], s.names[b]) })
	names, servers := make([]string, len(idx)), make([]json.RawMessage, len(idx))
	for i, j := range idx {
		names[i], servers[i] = s.names[j], s.servers[j]
	}
	s.names, s.servers = names, servers
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// Names are the names of the servers it serves, sorted.
func (s *Server) Names() []string { return slices.Clone(s.names) }

// Close stops the registry: from then on it cannot be reached.
func (s *Server) Close() { s.srv.Close() }

// Requests are the requests received, as "GET /path?query", in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// entry is a server.json as the registry lists it.
func entry(doc json.RawMessage) map[string]any {
	return map[string]any{
		"server": doc,
		"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{
			"status": "active", "publishedAt": Published, "updatedAt": Published, "isLatest": true,
		}},
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Method+" "+r.URL.RequestURI())
	pageSize := s.PageSize
	s.mu.Unlock()
	if r.Method != http.MethodGet {
		writeJSON(w, r, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"}, "")
		return
	}
	cc := s.CacheControl
	if name, ok := strings.CutPrefix(r.URL.Path, "/v0.1/servers/"); ok {
		name, ok = strings.CutSuffix(name, "/versions/latest")
		i := slices.Index(s.names, name)
		if !ok || i < 0 {
			writeJSON(w, r, http.StatusNotFound, map[string]string{"error": "Server not found"}, "")
			return
		}
		writeJSON(w, r, http.StatusOK, entry(s.servers[i]), cc)
		return
	}
	if r.URL.Path != "/v0.1/servers" {
		writeJSON(w, r, http.StatusNotFound, map[string]string{"error": "not found"}, "")
		return
	}
	q := r.URL.Query()
	limit := 30
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			writeJSON(w, r, http.StatusBadRequest, map[string]string{"error": "limit must be between 1 and 100"}, "")
			return
		}
		limit = n
	}
	if pageSize > 0 {
		limit = min(limit, pageSize)
	}
	search := strings.ToLower(q.Get("search"))
	cursor := q.Get("cursor") // the name of the last server of the page before
	var page []any
	next := ""
	for i, name := range s.names {
		if !strings.Contains(strings.ToLower(name), search) || (cursor != "" && name <= cursor) {
			continue
		}
		if len(page) == limit {
			next = s.names[i-1]
			break
		}
		page = append(page, entry(s.servers[i]))
	}
	if page == nil {
		page = []any{}
	}
	meta := map[string]any{"count": len(page)}
	if next != "" {
		meta["nextCursor"] = next
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"servers": page, "metadata": meta}, cc)
}

// writeJSON answers v with an ETag, and 304 to a request that has it.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any, cacheControl string) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if status == http.StatusOK {
		h.Set("ETag", etag)
		if cacheControl != "" {
			h.Set("Cache-Control", cacheControl)
		}
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimSpace(body))
	fmt.Fprintln(w)
}
