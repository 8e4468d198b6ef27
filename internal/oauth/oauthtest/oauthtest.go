// Package oauthtest provides an OAuth 2.1 authorization server and an
// MCP server protected by it, speaking the real wire protocols, for tests
// of otter's OAuth client.
package oauthtest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// AuthServer is an OAuth 2.1 authorization server speaking the real wire
// protocol: RFC 8414 metadata, RFC 7591 registration, an authorization
// endpoint that approves at once (the person clicking "allow"), PKCE S256,
// a token endpoint that rotates refresh tokens and rejects reuse, and the
// client_credentials grant for machine clients (AddSecretClient,
// AddKeyClient) with client_secret_basic, client_secret_post or
// private_key_jwt (RFC 7523) client authentication.
type AuthServer struct {
	*httptest.Server
	// TokenLifetime is the lifetime of access tokens (default 1h).
	TokenLifetime time.Duration
	// RefreshDelay holds each refresh response, to widen race windows.
	RefreshDelay time.Duration
	// TokenAuthMethods is the metadata's
	// token_endpoint_auth_methods_supported (default ["none"]).
	TokenAuthMethods []string

	mu            sync.Mutex
	clients       map[string][]string // client_id → redirect URIs
	codes         map[string]codeGrant
	access        map[string]time.Time // access token → expiry
	refresh       map[string]bool      // refresh token → still valid
	granted       map[string]string    // access or refresh token → the scope it grants
	registrations int
	authorizes    int
	exchanges     int
	refreshes     int
	reuses        int // refresh tokens presented after rotation
	lastResource  string
	refreshRes    string                   // resource parameter of the last refresh request
	machines      map[string]machineClient // client_credentials clients by ID
	clientGrants  int
	jtis          map[string]bool // client assertion IDs seen (replays are refused)
}

// machineClient is a client of the client_credentials grant: it
// authenticates with a secret or, with key set, a signed assertion.
type machineClient struct {
	secret string
	key    crypto.PublicKey
}

type codeGrant struct {
	clientID, redirect, challenge, resource, scope string
}

// NewAuthServer starts an AuthServer on 127.0.0.1, closed when the test
// ends.
func NewAuthServer(t testing.TB) *AuthServer {
	t.Helper()
	as := &AuthServer{
		TokenLifetime: time.Hour,
		clients:       map[string][]string{},
		codes:         map[string]codeGrant{},
		access:        map[string]time.Time{},
		refresh:       map[string]bool{},
		granted:       map[string]string{},
		machines:      map[string]machineClient{},
		jtis:          map[string]bool{},
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

func (as *AuthServer) metadata(w http.ResponseWriter, r *http.Request) {
	methods := as.TokenAuthMethods
	if methods == nil {
		methods = []string{"none"}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                as.URL,
		"authorization_endpoint":                as.URL + "/authorize",
		"token_endpoint":                        as.URL + "/token",
		"registration_endpoint":                 as.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": methods,
		"scopes_supported":                      []string{"tools", "offline_access"},
	})
}

func (as *AuthServer) register(w http.ResponseWriter, r *http.Request) {
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

func (as *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
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
	as.codes[code] = codeGrant{q.Get("client_id"), q.Get("redirect_uri"), q.Get("code_challenge"), q.Get("resource"), q.Get("scope")}
	as.lastResource = q.Get("resource")
	u, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (as *AuthServer) token(w http.ResponseWriter, r *http.Request) {
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
		resp := as.issueLocked(true, g.scope)
		as.mu.Unlock()
		writeJSON(w, http.StatusOK, resp)
	case "refresh_token":
		time.Sleep(as.RefreshDelay)
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
		as.refreshRes = r.PostForm.Get("resource")
		resp := as.issueLocked(true, as.granted[rt])
		as.mu.Unlock()
		writeJSON(w, http.StatusOK, resp)
	case "client_credentials":
		if err := as.authenticateMachine(r); err != nil {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": err.Error()})
			return
		}
		as.mu.Lock()
		as.clientGrants++
		resp := as.issueLocked(false, r.PostForm.Get("scope")) // no refresh token (RFC 6749 §4.4.3)
		as.mu.Unlock()
		writeJSON(w, http.StatusOK, resp)
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
	}
}

// issueLocked issues a token granting scope (the person approves every
// scope asked for; "tools" when none was).
func (as *AuthServer) issueLocked(withRefresh bool, scope string) map[string]any {
	if strings.TrimSpace(scope) == "" {
		scope = "tools"
	}
	at := "at-" + rand.Text()
	as.access[at] = time.Now().Add(as.TokenLifetime)
	as.granted[at] = scope
	resp := map[string]any{
		"access_token": at,
		"token_type":   "Bearer",
		"expires_in":   int(as.TokenLifetime.Seconds()),
		"scope":        scope,
	}
	if withRefresh {
		rt := "rt-" + rand.Text()
		as.refresh[rt] = true
		as.granted[rt] = scope
		resp["refresh_token"] = rt
	}
	return resp
}

// AddSecretClient registers a client of the client_credentials grant that
// authenticates with a secret (client_secret_basic or client_secret_post).
func (as *AuthServer) AddSecretClient(id, secret string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.machines[id] = machineClient{secret: secret}
}

// AddKeyClient registers a client of the client_credentials grant that
// authenticates with a JWT signed by the private key of pub
// (private_key_jwt).
func (as *AuthServer) AddKeyClient(id string, pub crypto.PublicKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.machines[id] = machineClient{key: pub}
}

// clientAssertionType is the client_assertion_type of private_key_jwt.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// asymmetricAlgs are the JWS algorithms a client assertion may use.
var asymmetricAlgs = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// authenticateMachine checks the client authentication of a
// client_credentials token request: a client assertion (RFC 7523 §2.2:
// signed by the client's key, iss and sub the client ID, aud this server's
// issuer identifier, unexpired, jti never seen, and no other credentials)
// or the client's secret (HTTP Basic, RFC 6749 §2.3.1, or in the form).
func (as *AuthServer) authenticateMachine(r *http.Request) error {
	f := r.PostForm
	_, _, basic := r.BasicAuth()
	if f.Has("client_assertion") || f.Has("client_assertion_type") {
		if f.Get("client_assertion_type") != clientAssertionType {
			return fmt.Errorf("client_assertion_type %q", f.Get("client_assertion_type"))
		}
		if basic || f.Has("client_secret") {
			return errors.New("a client assertion must be the only client authentication")
		}
		id := f.Get("client_id")
		as.mu.Lock()
		c := as.machines[id]
		as.mu.Unlock()
		if c.key == nil {
			return fmt.Errorf("no client %q with a key", id)
		}
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(f.Get("client_assertion"), claims, func(*jwt.Token) (any, error) { return c.key, nil },
			jwt.WithValidMethods(asymmetricAlgs), jwt.WithIssuer(id), jwt.WithSubject(id), jwt.WithAudience(as.URL),
			jwt.WithExpirationRequired(), jwt.WithIssuedAt())
		if err != nil {
			return fmt.Errorf("client assertion: %w", err)
		}
		jti, _ := claims["jti"].(string)
		as.mu.Lock()
		defer as.mu.Unlock()
		if jti == "" || as.jtis[jti] {
			return fmt.Errorf("client assertion jti %q missing or replayed", jti)
		}
		as.jtis[jti] = true
		return nil
	}
	id, secret, _ := r.BasicAuth()
	if basic {
		// RFC 6749 §2.3.1: form-encoded before Basic encoding.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	as.mu.Lock()
	c := as.machines[id]
	as.mu.Unlock()
	if c.secret == "" || c.secret != secret {
		return fmt.Errorf("bad secret for client %q", id)
	}
	return nil
}

// RevokeAll invalidates every access and refresh token (the person revoked
// otter's access at the provider).
func (as *AuthServer) RevokeAll() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.access)
	for k := range as.refresh {
		delete(as.refresh, k)
	}
}

// ExpireAccess makes every access token expired at the server.
func (as *AuthServer) ExpireAccess() {
	as.mu.Lock()
	defer as.mu.Unlock()
	for k := range as.access {
		as.access[k] = time.Now().Add(-time.Minute)
	}
}

// RefreshValid reports whether the refresh token rt can be redeemed.
func (as *AuthServer) RefreshValid(rt string) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.refresh[rt]
}

// Counts are what the authorization server has seen.
type Counts struct{ Registrations, Authorizes, Exchanges, Refreshes, Reuses, ClientCredentials int }

// Counts returns what the server has seen so far.
func (as *AuthServer) Counts() Counts {
	as.mu.Lock()
	defer as.mu.Unlock()
	return Counts{as.registrations, as.authorizes, as.exchanges, as.refreshes, as.reuses, as.clientGrants}
}

// verify is the MCP server's token verifier.
func (as *AuthServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	exp, ok := as.access[token]
	if !ok || time.Now().After(exp) {
		return nil, fmt.Errorf("%w: unknown or expired token", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: strings.Fields(as.granted[token]), Expiration: exp}, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// NewProtectedMCP starts an MCP server (tool "echo") protected by the
// go-sdk's bearer-token middleware, with RFC 9728 protected resource
// metadata naming as. It serves streamable HTTP at /mcp and SSE at /sse, and
// returns the streamable endpoint URL.
func NewProtectedMCP(t testing.TB, as *AuthServer) string {
	t.Helper()
	return NewProtectedMCPServer(t, as).URL
}

// ProtectedMCP is the server of NewProtectedMCP.
type ProtectedMCP struct {
	// URL is the streamable HTTP endpoint.
	URL string

	mu       sync.Mutex
	required []string
}

// RequireScopes makes the server refuse tool calls whose token lacks any
// of scopes with 403 and a WWW-Authenticate challenge
// error="insufficient_scope" naming them (RFC 6750 §3.1), as a server does
// whose tool now needs more permissions. Other requests (initialize, lists)
// still pass with any valid token.
func (p *ProtectedMCP) RequireScopes(scopes ...string) {
	p.mu.Lock()
	p.required = scopes
	p.mu.Unlock()
}

// NewProtectedMCPServer is NewProtectedMCP, returning the server.
func NewProtectedMCPServer(t testing.TB, as *AuthServer) *ProtectedMCP {
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
	p := &ProtectedMCP{URL: ts.URL + "/mcp"}
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
		mux.Handle(path, auth.RequireBearerToken(as.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(p.checkScopes(prmURL, h)))
	}
	return p
}

// checkScopes answers 403 insufficient_scope to a verified token that
// lacks a required scope. (The go-sdk's middleware answers 403 without the
// error parameter, which clients must not take for a step-up request.)
func (p *ProtectedMCP) checkScopes(prmURL string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		required := p.required
		p.mu.Unlock()
		if len(required) == 0 || r.Method != http.MethodPost || !isToolCall(r) {
			next.ServeHTTP(w, r)
			return
		}
		info := auth.TokenInfoFromContext(r.Context())
		for _, s := range required {
			if info == nil || !slices.Contains(info.Scopes, s) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
					strings.Join(required, " "), prmURL))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isToolCall reports whether r posts a JSON-RPC tools/call request; it
// leaves r's body to be read again.
func isToolCall(r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call"
}

// Connect connects an MCP client to the streamable endpoint through h and
// calls echo; it returns the text of the result ("echo: hi").
func Connect(ctx context.Context, endpoint string, h auth.OAuthHandler) (string, error) {
	return CallEcho(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: h, DisableStandaloneSSE: true})
}

// CallEcho connects an MCP client through t and calls echo.
func CallEcho(ctx context.Context, t mcp.Transport) (string, error) {
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

// LastRefreshResource returns the resource parameter (RFC 8707) of the
// last refresh_token grant; "" if it had none.
func (as *AuthServer) LastRefreshResource() string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.refreshRes
}

// LastResource returns the resource parameter of the last authorization
// request.
func (as *AuthServer) LastResource() string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.lastResource
}

// IssueExpired has the server issue a token pair directly (as at an
// earlier login) and returns it, already expired at the client.
func (as *AuthServer) IssueExpired() *oauth2.Token {
	as.mu.Lock()
	m := as.issueLocked(true, "")
	as.mu.Unlock()
	return &oauth2.Token{
		AccessToken:  m["access_token"].(string),
		RefreshToken: m["refresh_token"].(string),
		TokenType:    "Bearer",
		Expiry:       time.Now().Add(-time.Minute),
	}
}

// browserURLEnv passes the URL to the browser stand-in.
const browserURLEnv = "OTTER_OAUTHTEST_BROWSER_URL"

// BrowserScript writes a $BROWSER stand-in and returns its path: a script
// that runs the test named helper of this test binary with the URL. The
// helper test must call RunBrowser first thing:
//
//	func TestBrowserHelper(t *testing.T) { oauthtest.RunBrowser() }
func BrowserScript(t testing.TB, helper string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "browser")
	script := fmt.Sprintf("#!/bin/sh\n%s=\"$1\" exec %s -test.run='^%s$'\n", browserURLEnv, shellQuote(os.Args[0]), helper)
	if err := os.WriteFile(p, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// RunBrowser acts as the browser when the test binary was started by a
// BrowserScript: it loads the URL, following redirects as a browser does
// after the person approves, and exits. Otherwise it returns at once.
func RunBrowser() {
	u := os.Getenv(browserURLEnv)
	if u == "" {
		return
	}
	resp, err := http.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser stand-in:", err)
		os.Exit(1)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	os.Exit(0)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
