package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// refreshMargin is how long before its expiry an access token is refreshed.
const refreshMargin = 30 * time.Second

// refreshTimeout bounds one refresh request to the token endpoint.
const refreshTimeout = 30 * time.Second

// tokenSource is an oauth2.TokenSource backed by the token store. It keeps
// the current token in memory; when the token is about to expire it takes
// the store's lock, re-reads the record (another otter process may have
// refreshed it already, rotating the refresh token), and only then refreshes
// and saves the result.
//
// Token returns (nil, nil) when there is no usable token (never logged in,
// or the refresh token was rejected): the MCP transport then sends the
// request without credentials, the server answers 401, and the handler's
// Authorize decides what happens next.
type tokenSource struct {
	store     *store
	serverURL string
	client    *http.Client
	logger    *slog.Logger

	mu  sync.Mutex
	tok *oauth2.Token
}

// fresh reports whether tok needs no refresh yet: it expires later than
// refreshMargin from now, or - for short-lived tokens - later than half
// its lifetime.
func fresh(tok *oauth2.Token) bool {
	if tok == nil || tok.AccessToken == "" {
		return false
	}
	if tok.Expiry.IsZero() {
		return true
	}
	margin := refreshMargin
	if half := time.Duration(tok.ExpiresIn) * time.Second / 2; half > 0 && half < margin {
		margin = half
	}
	return time.Until(tok.Expiry) > margin
}

// unexpired reports whether tok can still be sent, though due for refresh.
func unexpired(tok *oauth2.Token) bool {
	return tok != nil && tok.AccessToken != "" && (tok.Expiry.IsZero() || time.Now().Before(tok.Expiry))
}

// Token implements oauth2.TokenSource.
func (ts *tokenSource) Token() (*oauth2.Token, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if fresh(ts.tok) {
		return ts.tok, nil
	}
	// Look without the lock first: most remote servers need no OAuth, and
	// a token another process stored may be fresh. Files are replaced by
	// rename, so an unlocked read is consistent.
	rec, err := ts.store.load(ts.serverURL)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Token == nil {
		ts.tok = nil
		return nil, nil
	}
	if fresh(rec.Token) {
		ts.tok = rec.Token
		return ts.tok, nil
	}
	tok, _, err := ts.renew("")
	return tok, err
}

// set makes tok the current token (after a login).
func (ts *tokenSource) set(tok *oauth2.Token) {
	ts.mu.Lock()
	ts.tok = tok
	ts.mu.Unlock()
}

// recover is called when the server refused the access token rejected
// although it had not expired. Under the lock it takes a newer token another
// process stored, or refreshes. It reports whether there is now a token
// different from rejected.
func (ts *tokenSource) recover(rejected string) (bool, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tok, refreshed, err := ts.renew(rejected)
	if err != nil {
		return false, err
	}
	return tok != nil && (refreshed || tok.AccessToken != rejected), nil
}

// renew loads the stored token under the lock and refreshes it if it is
// stale or equal to rejected. The caller holds ts.mu.
func (ts *tokenSource) renew(rejected string) (tok *oauth2.Token, refreshed bool, err error) {
	err = ts.store.update(ts.serverURL, func(rec *record) (bool, error) {
		cur := rec.Token
		if cur == nil {
			return false, nil
		}
		if fresh(cur) && cur.AccessToken != rejected {
			tok = cur
			return false, nil
		}
		if cur.RefreshToken == "" || rec.Client == nil {
			if unexpired(cur) && cur.AccessToken != rejected {
				tok = cur // the last minutes of a token that cannot be refreshed
			} else {
				ts.logger.Debug("oauth: the stored token expired and cannot be refreshed", "server", ts.serverURL)
			}
			return false, nil
		}
		nt, err := ts.refresh(rec.Client, cur.RefreshToken)
		if err != nil {
			var re *oauth2.RetrieveError
			if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client") {
				// The grant is gone (revoked, expired, or reused): forget
				// the token so the server goes back to needing a login.
				ts.logger.Warn("oauth: the authorization server rejected the refresh token; log in again",
					"server", ts.serverURL, "error", re.ErrorCode)
				rec.Token, rec.Scope = nil, ""
				return true, nil
			}
			if unexpired(cur) && cur.AccessToken != rejected {
				// Try again at the next request; the token still works.
				ts.logger.Warn("oauth: could not refresh the token yet", "server", ts.serverURL, "err", err)
				tok = cur
				return false, nil
			}
			return false, fmt.Errorf("refresh the OAuth token for %s: %w", ts.serverURL, err)
		}
		rec.Token = nt
		if s, ok := nt.Extra("scope").(string); ok && s != "" {
			rec.Scope = s
		}
		tok, refreshed = nt, true
		return true, nil
	})
	if err != nil {
		return nil, false, err
	}
	ts.tok = tok
	return tok, refreshed, nil
}

// refresh redeems refreshToken at the client's token endpoint.
func (ts *tokenSource) refresh(c *clientInfo, refreshToken string) (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	client := ts.client
	if c.Resource != "" {
		// The MCP authorization spec wants the resource parameter in every
		// token request, so that the token stays bound to this server.
		client = &http.Client{Transport: &resourceParam{base: transportOf(ts.client), resource: c.Resource},
			Timeout: ts.client.Timeout, Jar: ts.client.Jar}
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, client)
	// An expired token with only the refresh token makes the oauth2
	// package redeem it; a response without a new refresh token keeps the
	// old one.
	return c.config().TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken}).Token()
}

// resourceParam adds the resource parameter (RFC 8707) to the form a
// refresh posts to the token endpoint: the oauth2 package's refresh takes no
// extra parameters.
type resourceParam struct {
	base     http.RoundTripper
	resource string
}

func (t *resourceParam) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the token request: %w", err)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("parse the token request: %w", err)
	}
	if form.Get("resource") == "" {
		form.Set("resource", t.resource)
	}
	enc := form.Encode()
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(strings.NewReader(enc))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(enc)), nil }
	req.ContentLength = int64(len(enc))
	return t.base.RoundTrip(req)
}
