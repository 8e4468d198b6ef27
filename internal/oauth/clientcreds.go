package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/otter-sh/otter/internal/config"
)

// ccHandler is the auth.OAuthHandler of a server whose [mcp.servers.oauth]
// selects the client_credentials grant (OAuth 2.1 §4.2, MCP extension
// SEP-1046): otter is a machine client with its own credentials, so no
// person, browser or prompt is involved and the handler never reports
// ErrLoginRequired.
//
// The go-sdk's extauth.ClientCredentialsHandler runs the protocol
// (protected-resource and authorization-server metadata discovery, scopes
// from the challenge, step-up, the token request with client_secret_basic
// or client_secret_post). For private_key_jwt client authentication, which
// that handler does not offer, its token requests go through an
// assertionTransport that replaces the secret with a signed client
// assertion (RFC 7523 §2.2).
//
// Tokens are not stored: each otter process redeems the credentials once
// when the server first answers 401, and again when the token expires or
// the server refuses it. The credentials in the configuration are all a
// client needs, so nothing is written under the token store and
// `otter mcp logout` has nothing to forget.
type ccHandler struct {
	a   *Authorizer
	srv config.Server

	// mu serializes the SDK handler's Authorize and TokenSource, which
	// share unsynchronized state, and keeps concurrent 401s to one token
	// request.
	mu  sync.Mutex
	sdk *extauth.ClientCredentialsHandler
}

var _ auth.OAuthHandler = (*ccHandler)(nil)

func (h *ccHandler) name() string { return nameOf(h.srv) }

// TokenSource implements auth.OAuthHandler. Before the first Authorize
// its Token is nil: the request goes without credentials and the server's
// 401 starts the grant.
func (h *ccHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return ccTokenSource{h}, nil
}

type ccTokenSource struct{ h *ccHandler }

// Token implements oauth2.TokenSource. A token that can no longer be
// renewed (say the authorization server is down) is reported as none: the
// server then answers 401 and Authorize reports what went wrong.
func (s ccTokenSource) Token() (*oauth2.Token, error) {
	tok, err := s.h.current()
	if err != nil {
		s.h.a.logger.Warn("oauth: could not renew the client credentials token", "server", s.h.name(), "err", err)
		return nil, nil
	}
	return tok, nil
}

// current returns the SDK handler's token: nil before the first grant,
// else its cached token or, once that expired, a new one.
func (h *ccHandler) current() (*oauth2.Token, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.currentLocked()
}

func (h *ccHandler) currentLocked() (*oauth2.Token, error) {
	if h.sdk == nil {
		return nil, nil
	}
	ts, err := h.sdk.TokenSource(context.Background())
	if err != nil || ts == nil {
		return nil, err
	}
	return ts.Token()
}

// Authorize implements auth.OAuthHandler. It is called when the server
// answered 401 or 403.
func (h *ccHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if resp.StatusCode == http.StatusUnauthorized {
		// A grant finished while this request waited: retry with its token.
		if tok, _ := h.currentLocked(); tok != nil && tok.AccessToken != bearer(req) {
			drain(resp)
			return nil
		}
	}
	if h.sdk == nil {
		sdk, err := h.newSDKHandler()
		if err != nil {
			drain(resp)
			return fmt.Errorf("%s: OAuth client credentials%s: %w", h.name(), h.where(), err)
		}
		h.sdk = sdk
	}
	// The SDK keeps the context for renewing the token later, long after
	// this request: keep its values, not its cancellation. The HTTP
	// client's timeout bounds each request.
	if err := h.sdk.Authorize(context.WithoutCancel(ctx), req, resp); err != nil {
		hint := ""
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_client" {
			hint = fmt.Sprintf(" (check client_id and the client_secret or private key in [mcp.servers.oauth]%s)", h.where())
		}
		return fmt.Errorf("%s: get a token with the client_credentials grant: %w%s", h.name(), err, hint)
	}
	return nil
}

// where names the config entry of the server, if it has one.
func (h *ccHandler) where() string {
	if h.srv.File == "" {
		return ""
	}
	return fmt.Sprintf(" of %s:%d", h.srv.File, h.srv.Line)
}

// placeholderSecret stands in for the client secret the SDK's handler
// requires when the client authenticates with a private key instead; the
// assertionTransport removes it from the token request.
const placeholderSecret = "private_key_jwt"

// newSDKHandler builds the SDK's client credentials handler from the
// server's [mcp.servers.oauth].
func (h *ccHandler) newSDKHandler() (*extauth.ClientCredentialsHandler, error) {
	o := h.srv.OAuth
	keyGiven := o.PrivateKeyFile != "" || o.PrivateKeyPEM != ""
	switch {
	case o.ClientID == "":
		return nil, errors.New("the client_credentials grant needs a client_id (client_id in [mcp.servers.oauth])")
	case !keyGiven && o.ClientSecret == "":
		return nil, errors.New("the client_credentials grant needs a client_secret or a private key (private_key_file, private_key_pem)")
	case keyGiven && o.ClientSecret != "":
		return nil, errors.New("give either a client_secret or a private key, not both")
	}
	client := &http.Client{Transport: transportOf(h.a.client), Timeout: h.a.client.Timeout, Jar: h.a.client.Jar}
	creds := &oauthex.ClientCredentials{ClientID: o.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}}
	if keyGiven {
		key, err := loadClientKey(o)
		if err != nil {
			return nil, err
		}
		creds.ClientSecretAuth.ClientSecret = placeholderSecret
		client.Transport = &assertionTransport{base: client.Transport, clientID: o.ClientID, key: key}
	}
	return extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: creds, HTTPClient: client})
}
