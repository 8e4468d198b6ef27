package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// testAS is an OAuth 2.1 authorization server speaking the real wire
// protocol: RFC 8414 metadata, RFC 7591 registration, an authorization
// endpoint that approves at once (the person clicking "allow"), PKCE S256,
// and a token endpoint that rotates refresh tokens and rejects reuse.
type testAS struct {
	*httptest.Server
	tokenLifetime time.Duration
	refreshDelay  time.Duration // held before answering a refresh

	mu            sync.Mutex
	clients       map[string][]string // client_id → redirect URIs
	codes         map[string]codeGrant
	access        map[string]time.Time // access token → expiry
	refresh       map[string]bool      // refresh token → still valid
	registrations int
	authorizes    int
	exchanges     int
	refreshes     int
	reuses        int // refresh tokens presented after rotation
	lastResource  string
}

type codeGrant struct {
	clientID, redirect, challenge, resource string
}

func newTestAS(t *testing.T) *testAS {
	t.Helper()
	as := &testAS{
		tokenLifetime: time.Hour,
		clients:       map[string][]string{},
		codes:         map[string]codeGrant{},
		access:        map[string]time.Time{},
		refresh:       map[string]bool{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", as.metadata)
	mux.HandleFunc("POST /register", as.register)
	mux.HandleFunc("GET /authorize", as.authorize)
	mux.HandleFunc("POST /token", as.token)
	as.Server = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}

func (as *testAS) metadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                as.URL,
		"authorization_endpoint":                as.URL + "/authorize",
		"token_endpoint":                        as.URL + "/token",
		"registration_endpoint":                 as.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      []string{"tools", "offline_access"},
	})
}

func (as *testAS) register(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	as.mu.Lock()
	as.registrations++
	id := "client-" + rand.Text()
	as.clients[id] = meta.RedirectURIs
	as.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  id,
		"redirect_uris":              meta.RedirectURIs,
		"token_endpoint_auth_method": "none",
	})
}

func (as *testAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	as.mu.Lock()
	defer as.mu.Unlock()
	as.authorizes++
	redirects, ok := as.clients[q.Get("client_id")]
	if !ok || !slices.Contains(redirects, q.Get("redirect_uri")) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE S256 required", http.StatusBadRequest)
		return
	}
	code := "code-" + rand.Text()
	as.codes[code] = codeGrant{q.Get("client_id"), q.Get("redirect_uri"), q.Get("code_challenge"), q.Get("resource")}
	as.lastResource = q.Get("resource")
	u, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (as *testAS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		as.mu.Lock()
		g, ok := as.codes[r.PostForm.Get("code")]
		delete(as.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.redirect != r.PostForm.Get("redirect_uri") || g.clientID != r.PostForm.Get("client_id") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			as.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		as.exchanges++
		resp := as.issueLocked()
		as.mu.Unlock()
		writeJSON(w, http.StatusOK, resp)
	case "refresh_token":
		time.Sleep(as.refreshDelay)
		as.mu.Lock()
		rt := r.PostForm.Get("refresh_token")
		valid, known := as.refresh[rt]
		if !valid {
			if known {
				as.reuses++
			}
			as.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "refresh token reused or unknown"})
			return
		}
		as.refresh[rt] = false // rotated
		as.refreshes++
		resp := as.issueLocked()
		as.mu.Unlock()
		writeJSON(w, http.StatusOK, resp)
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
	}
}

func (as *testAS) issueLocked() map[string]any {
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	as.access[at] = time.Now().Add(as.tokenLifetime)
	as.refresh[rt] = true
	return map[string]any{
		"access_token":  at,
		"token_type":    "Bearer",
		"expires_in":    int(as.tokenLifetime.Seconds()),
		"refresh_token": rt,
		"scope":         "tools",
	}
}

// revokeAll invalidates every access and refresh token (the person revoked
// otter's access at the provider).
func (as *testAS) revokeAll() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.access)
	for k := range as.refresh {
		delete(as.refresh, k)
	}
}

// expireAccess makes every access token expired at the server.
func (as *testAS) expireAccess() {
	as.mu.Lock()
	defer as.mu.Unlock()
	for k := range as.access {
		as.access[k] = time.Now().Add(-time.Minute)
	}
}

func (as *testAS) refreshValid(rt string) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.refresh[rt]
}

type asCounts struct{ registrations, authorizes, exchanges, refreshes, reuses int }

func (as *testAS) counts() asCounts {
	as.mu.Lock()
	defer as.mu.Unlock()
	return asCounts{as.registrations, as.authorizes, as.exchanges, as.refreshes, as.reuses}
}

// verify is the MCP server's token verifier.
func (as *testAS) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	exp, ok := as.access[token]
	if !ok || time.Now().After(exp) {
		return nil, fmt.Errorf("%w: unknown or expired token", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: exp}, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// newProtectedMCP starts an MCP server (tool "echo") protected by the
// go-sdk's bearer-token middleware, with RFC 9728 protected resource
// metadata naming as. It serves streamable HTTP at /mcp and SSE at /sse, and
// returns the streamable endpoint URL.
func newProtectedMCP(t *testing.T, as *testAS) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1.0.0"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(ctx context.Context, req *mcp.CallToolRequest, args echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + args.Text}}}, nil, nil
		})
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	getServer := func(*http.Request) *mcp.Server { return server }
	for path, h := range map[string]http.Handler{
		"/mcp": mcp.NewStreamableHTTPHandler(getServer, nil),
		"/sse": mcp.NewSSEHandler(getServer, nil),
	} {
		prmURL := ts.URL + "/.well-known/oauth-protected-resource" + path
		mux.Handle("/.well-known/oauth-protected-resource"+path, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:             ts.URL + path,
			AuthorizationServers: []string{as.URL},
			ScopesSupported:      []string{"tools"},
		}))
		mux.Handle(path, auth.RequireBearerToken(as.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(h))
	}
	return ts.URL + "/mcp"
}

// connect connects an MCP client to endpoint through h and calls echo.
func connect(ctx context.Context, endpoint string, h auth.OAuthHandler) (string, error) {
	return callEcho(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: h, DisableStandaloneSSE: true})
}

// callEcho connects an MCP client through t and calls echo.
func callEcho(ctx context.Context, t mcp.Transport) (string, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "otter-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return "", err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", errors.New("empty result")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("result content is %T", res.Content[0])
	}
	return strings.TrimSpace(tc.Text), nil
}
