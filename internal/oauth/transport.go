package oauth

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Transport returns an http.RoundTripper that authorizes requests with h,
// for MCP transports without built-in OAuth support (the go-sdk's SSE client
// transport): it sets the bearer token from h's token source and, when the
// server answers 401 or 403, lets h authorize and retries the request once.
// base nil means http.DefaultTransport.
func Transport(h auth.OAuthHandler, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{h: h, base: base}
}

type authTransport struct {
	h    auth.OAuthHandler
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // the body cannot be sent again
	}
	if err := t.h.Authorize(req.Context(), r, resp); err != nil {
		return nil, err
	}
	retry, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.base.RoundTrip(retry)
}

// authorized returns a copy of req carrying the current bearer token, if
// there is one.
func (t *authTransport) authorized(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	ts, err := t.h.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	if ts == nil {
		return r, nil
	}
	tok, err := ts.Token()
	if err != nil {
		return nil, err
	}
	if tok != nil && tok.AccessToken != "" {
		r.Header.Set("Authorization", tok.Type()+" "+tok.AccessToken)
	}
	return r, nil
}
