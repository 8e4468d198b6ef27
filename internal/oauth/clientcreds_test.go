package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth/oauthtest"
)

// neverAsk is a LoginPrompter that fails the test: a machine client must
// never involve a person.
type neverAsk struct{ t *testing.T }

func (n neverAsk) Login(context.Context, ask.Login) (ask.LoginReply, error) {
	n.t.Error("a client_credentials server asked a person to log in")
	return ask.LoginReply{Choice: ask.LoginLater}, nil
}

// machineAuthorizer returns an Authorizer that fails the test if it asks
// anyone or opens a browser.
func (f *fixture) machineAuthorizer(t *testing.T) *Authorizer {
	return f.authorizer(Options{Prompter: neverAsk{t}, OpenBrowser: func(string) error {
		t.Error("a client_credentials server opened a browser")
		return errors.New("no browser in this test")
	}})
}

func ccServer(f *fixture, o config.OAuth) config.Server {
	srv := f.srv
	o.Grant = config.GrantClientCredentials
	srv.OAuth = &o
	return srv
}

// TestClientCredentialsSecret: a machine client with a secret connects
// without a person, even through a non-interactive handler (as at
// startup), with the authentication method the authorization server
// advertises; the token is reused by later connections, renewed when the
// server refuses it, and never written to the token store.
func TestClientCredentialsSecret(t *testing.T) {
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		t.Run(method, func(t *testing.T) {
			f := newFixture(t)
			f.as.TokenAuthMethods = []string{method}
			f.as.AddSecretClient("otter-ci", "s3cret:with/odd&chars")
			a := f.machineAuthorizer(t)
			srv := ccServer(f, config.OAuth{ClientID: "otter-ci", ClientSecret: "s3cret:with/odd&chars"})
			h := a.Handler(srv, false)
			for i := range 2 {
				if got, err := oauthtest.Connect(f.ctx, f.endpoint, h); err != nil || got != "echo: hi" {
					t.Fatalf("connection %d: %q, %v", i+1, got, err)
				}
			}
			if c := f.as.Counts(); c.ClientCredentials != 1 || c.Registrations != 0 || c.Authorizes != 0 {
				t.Errorf("after two connections: %+v, want one client_credentials grant and no registration or authorization", c)
			}

			f.as.ExpireAccess()
			if got, err := oauthtest.Connect(f.ctx, f.endpoint, h); err != nil || got != "echo: hi" {
				t.Fatalf("after the server expired the token: %q, %v", got, err)
			}
			if c := f.as.Counts(); c.ClientCredentials != 2 {
				t.Errorf("grants = %d, want a second one after the server refused the token", c.ClientCredentials)
			}
			if _, err := os.Stat(a.TokenFile(srv)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("token file %s: %v, want none (client credentials tokens are not stored)", a.TokenFile(srv), err)
			}
			if a.LoggedIn(srv) {
				t.Error("LoggedIn is true for a machine client")
			}
		})
	}
}

// TestClientCredentialsSSE: the same through the SSE transport wrapper.
func TestClientCredentialsSSE(t *testing.T) {
	f := newFixture(t)
	f.as.AddSecretClient("otter-ci", "s")
	sseURL := strings.TrimSuffix(f.endpoint, "/mcp") + "/sse"
	srv := ccServer(f, config.OAuth{ClientID: "otter-ci", ClientSecret: "s"})
	srv.URL, srv.Transport = sseURL, config.TransportSSE
	h := f.machineAuthorizer(t).Handler(srv, false)
	tr := &mcp.SSEClientTransport{Endpoint: sseURL, HTTPClient: &http.Client{Transport: Transport(h, nil)}}
	if got, err := oauthtest.CallEcho(f.ctx, tr); err != nil || got != "echo: hi" {
		t.Fatalf("SSE: %q, %v", got, err)
	}
}

// TestClientCredentialsWrongSecret: a rejected secret is an error that
// says what to check and where, not a login the person could do.
func TestClientCredentialsWrongSecret(t *testing.T) {
	f := newFixture(t)
	f.as.AddSecretClient("otter-ci", "right")
	srv := ccServer(f, config.OAuth{ClientID: "otter-ci", ClientSecret: "wrong"})
	srv.File, srv.Line = "/home/u/.config/otter/config.toml", 12
	_, err := oauthtest.Connect(f.ctx, f.endpoint, f.machineAuthorizer(t).Handler(srv, true))
	if err == nil {
		t.Fatal("connected with a wrong secret")
	}
	if errors.Is(err, ErrLoginRequired) {
		t.Errorf("err = %v; a machine client never needs a login", err)
	}
	for _, want := range []string{"remote", "invalid_client", "client_secret", "config.toml:12"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("error %q shows the secret", err)
	}
}

// writeKey writes key as PEM (in the given form) and returns its path and
// text.
func writeKey(t *testing.T, key crypto.Signer, form string) (string, string) {
	t.Helper()
	var der []byte
	var err error
	switch form {
	case "PRIVATE KEY":
		der, err = x509.MarshalPKCS8PrivateKey(key)
	case "EC PRIVATE KEY":
		der, err = x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	case "RSA PRIVATE KEY":
		der = x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))
	}
	if err != nil {
		t.Fatal(err)
	}
	text := string(pem.EncodeToMemory(&pem.Block{Type: form, Bytes: der}))
	p := filepath.Join(t.TempDir(), "client.pem")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, text
}

// TestClientCredentialsPrivateKeyJWT: with a private key the token request
// carries a signed assertion that the authorization server verifies with
// the client's public key (signature, iss = sub = client ID, aud = its
// issuer, expiry, unique jti, no secret besides it); each grant signs a
// new one.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		name  string
		key   crypto.Signer
		form  string
		alg   string
		asPEM bool // private_key_pem instead of private_key_file
	}{
		{"ES256 PKCS8 file", p256, "PRIVATE KEY", "ES256", false},
		{"ES384 SEC1 pem default alg", p384, "EC PRIVATE KEY", "", true},
		{"RS256 PKCS1 file default alg", rsaKey, "RSA PRIVATE KEY", "", false},
		{"PS256 PKCS8 pem", rsaKey, "PRIVATE KEY", "PS256", true},
		{"EdDSA PKCS8 file", edKey, "PRIVATE KEY", "EdDSA", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.as.TokenAuthMethods = []string{"private_key_jwt"}
			f.as.AddKeyClient("otter-jwt", tc.key.Public())
			file, text := writeKey(t, tc.key, tc.form)
			o := config.OAuth{ClientID: "otter-jwt", SigningAlg: tc.alg, PrivateKeyFile: file}
			if tc.asPEM {
				o.PrivateKeyFile, o.PrivateKeyPEM = "", text
			}
			h := f.machineAuthorizer(t).Handler(ccServer(f, o), false)
			if got, err := oauthtest.Connect(f.ctx, f.endpoint, h); err != nil || got != "echo: hi" {
				t.Fatalf("connect: %q, %v", got, err)
			}
			f.as.ExpireAccess()
			if got, err := oauthtest.Connect(f.ctx, f.endpoint, h); err != nil || got != "echo: hi" {
				t.Fatalf("connect after the token expired (a new assertion): %q, %v", got, err)
			}
			if c := f.as.Counts(); c.ClientCredentials != 2 {
				t.Errorf("grants = %d, want 2", c.ClientCredentials)
			}
		})
	}
}

// TestClientCredentialsBadKey: key problems are reported before any
// token request, naming the key and what to change.
func TestClientCredentialsBadKey(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	file, _ := writeKey(t, p256, "PRIVATE KEY")
	missing := filepath.Join(t.TempDir(), "nope.pem")
	for _, tc := range []struct {
		name string
		o    config.OAuth
		want []string
	}{
		{"alg does not fit the key", config.OAuth{ClientID: "c", PrivateKeyFile: file, SigningAlg: "RS256"}, []string{file, "cannot sign with RS256", "signing_alg"}},
		{"curve does not fit the alg", config.OAuth{ClientID: "c", PrivateKeyFile: file, SigningAlg: "ES384"}, []string{"cannot sign with ES384"}},
		{"missing file", config.OAuth{ClientID: "c", PrivateKeyFile: missing}, []string{"read the private key", missing}},
		{"not PEM", config.OAuth{ClientID: "c", PrivateKeyPEM: "${KEY}"}, []string{"private_key_pem", "no PEM block"}},
		{"encrypted", config.OAuth{ClientID: "c", PrivateKeyPEM: "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"}, []string{"encrypted", "unencrypted"}},
		{"no client_id", config.OAuth{ClientSecret: "s"}, []string{"needs a client_id", "client_id in [mcp.servers.oauth]"}},
		{"no credentials", config.OAuth{ClientID: "c"}, []string{"needs a client_secret or a private key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := oauthtest.Connect(f.ctx, f.endpoint, f.machineAuthorizer(t).Handler(ccServer(f, tc.o), false))
			if err == nil {
				t.Fatal("connected")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if c := f.as.Counts(); c.ClientCredentials != 0 {
				t.Errorf("grants = %d, want none", c.ClientCredentials)
			}
		})
	}
}

// TestClientCredentialsConcurrent: connections that start together through
// one handler share one grant.
func TestClientCredentialsConcurrent(t *testing.T) {
	f := newFixture(t)
	f.as.AddSecretClient("otter-ci", "s")
	h := f.machineAuthorizer(t).Handler(ccServer(f, config.OAuth{ClientID: "otter-ci", ClientSecret: "s"}), false)
	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := oauthtest.Connect(f.ctx, f.endpoint, h)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if c := f.as.Counts(); c.ClientCredentials != 1 {
		t.Errorf("grants = %d for %d concurrent connections, want 1", c.ClientCredentials, n)
	}
}
