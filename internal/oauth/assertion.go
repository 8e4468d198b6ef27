package oauth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/otter-sh/otter/internal/config"
)

// clientAssertionType is the client_assertion_type of private_key_jwt
// client authentication (RFC 7523 §2.2).
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid: long enough
// for clock skew, short enough that a captured one is soon useless.
const assertionLifetime = 5 * time.Minute

// maxMetadataBytes bounds an authorization server metadata document the
// assertionTransport reads.
const maxMetadataBytes = 1 << 20

// clientKey is a private key with the JWS algorithm it signs with.
type clientKey struct {
	key    crypto.Signer
	method jwt.SigningMethod
}

// loadClientKey reads the private key of o (private_key_pem, else
// private_key_file) and checks that it can sign with o.SigningAlg, or with
// the usual algorithm for its type when that is empty.
func loadClientKey(o *config.OAuth) (*clientKey, error) {
	data, src := []byte(o.PrivateKeyPEM), "private_key_pem"
	if o.PrivateKeyPEM == "" {
		src = o.PrivateKeyFile
		var err error
		if data, err = os.ReadFile(o.PrivateKeyFile); err != nil {
			return nil, fmt.Errorf("read the private key: %w", err)
		}
	}
	key, err := parsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	alg := o.SigningAlg
	if alg == "" {
		alg = defaultAlg(key)
	}
	method := jwt.GetSigningMethod(alg)
	if method == nil {
		return nil, fmt.Errorf("unsupported signing_alg %q (use one of %s)", alg, strings.Join(config.SigningAlgs, ", "))
	}
	// Sign once now, so that a key that does not fit the algorithm (an
	// RSA key with ES256, a P-256 key with ES384) is reported up front.
	if _, err := jwt.New(method).SignedString(key); err != nil {
		return nil, fmt.Errorf("%s cannot sign with %s (set signing_alg to match the key): %w", src, alg, err)
	}
	return &clientKey{key: key, method: method}, nil
}

// parsePrivateKey parses the first PEM block of data: PKCS #8, SEC 1 EC or
// PKCS #1 RSA, unencrypted.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found (expected -----BEGIN PRIVATE KEY-----)")
	}
	if block.Type == "ENCRYPTED PRIVATE KEY" || block.Headers["Proc-Type"] != "" {
		return nil, errors.New("the private key is encrypted; give otter an unencrypted key (e.g. `openssl pkey -in KEY -out KEY.pem`) in a file only you can read")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("parse the %s: %w", strings.ToLower(block.Type), err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T cannot sign", key)
	}
	return signer, nil
}

// defaultAlg is the usual JWS algorithm for a key.
func defaultAlg(key crypto.Signer) string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P384():
			return "ES384"
		case elliptic.P521():
			return "ES512"
		}
		return "ES256"
	case ed25519.PrivateKey:
		return "EdDSA"
	case *rsa.PrivateKey:
		return "RS256"
	}
	return ""
}

// assertionTransport is the http.RoundTripper of the go-sdk's client
// credentials handler for a client that authenticates with a private key
// (private_key_jwt). The handler only knows client secrets, so it is given
// a placeholder; this transport rewrites its token requests
// (grant_type=client_credentials) to carry a fresh signed assertion
// instead: no Authorization header, no client_secret, client_id,
// client_assertion_type and client_assertion. Everything else passes
// through untouched.
//
// The assertion's audience is the authorization server's issuer
// identifier (as draft-ietf-oauth-rfc7523bis requires), which the
// transport learns from the RFC 8414 / OpenID metadata the handler fetches
// through it; without metadata (the 2025-03-26 fallback endpoints) it is
// the token endpoint URL.
type assertionTransport struct {
	base     http.RoundTripper
	clientID string
	key      *clientKey

	mu      sync.Mutex
	issuers map[string]string // token endpoint → issuer
}

// RoundTrip implements http.RoundTripper.
func (t *assertionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
			return t.tokenRequest(req)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK && isAuthServerMetadata(req.URL.Path) {
		t.learnIssuer(resp)
	}
	return resp, err
}

func isAuthServerMetadata(p string) bool {
	return strings.Contains(p, "/.well-known/oauth-authorization-server") || strings.Contains(p, "/.well-known/openid-configuration")
}

// learnIssuer notes the issuer of a token endpoint from a metadata
// response, leaving the response readable.
func (t *assertionTransport) learnIssuer(resp *http.Response) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return // the handler reports the truncated body
	}
	var meta struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if json.Unmarshal(body, &meta) != nil || meta.Issuer == "" || meta.TokenEndpoint == "" {
		return
	}
	t.mu.Lock()
	if t.issuers == nil {
		t.issuers = map[string]string{}
	}
	t.issuers[meta.TokenEndpoint] = meta.Issuer
	t.mu.Unlock()
}

// tokenRequest sends a form POST, replacing the client secret of a
// client_credentials token request with a client assertion.
func (t *assertionTransport) tokenRequest(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("grant_type") != "client_credentials" {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		return t.base.RoundTrip(r)
	}
	endpoint := req.URL.String()
	assertion, err := t.assertion(endpoint)
	if err != nil {
		return nil, fmt.Errorf("sign the client assertion: %w", err)
	}
	form.Del("client_secret")
	form.Set("client_id", t.clientID)
	form.Set("client_assertion_type", clientAssertionType)
	form.Set("client_assertion", assertion)
	enc := form.Encode()
	r := req.Clone(req.Context())
	r.Header.Del("Authorization")
	r.Body = io.NopCloser(strings.NewReader(enc))
	r.ContentLength = int64(len(enc))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(enc)), nil }
	return t.base.RoundTrip(r)
}

// assertion signs a new client assertion for the token endpoint.
func (t *assertionTransport) assertion(endpoint string) (string, error) {
	t.mu.Lock()
	aud, ok := t.issuers[endpoint]
	t.mu.Unlock()
	if !ok {
		aud = endpoint
	}
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": t.clientID,
		"sub": t.clientID,
		"aud": aud,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": rand.Text(),
	}
	return jwt.NewWithClaims(t.key.method, claims).SignedString(t.key.key)
}
