package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
)

// maxRegistrationBytes bounds a registration response otter keeps.
const maxRegistrationBytes = 1 << 20

// registrationCache is an http.RoundTripper for the go-sdk's auth handler
// that remembers dynamic client registrations (RFC 7591) in the token store:
// the first registration at an endpoint is sent and its response saved; a
// later identical registration request (same endpoint, same metadata, hence
// the same redirect URI) is answered from the store. The auth handler
// registers on every authorization; this keeps otter to one client per
// server, across restarts. The only JSON POST the handler sends is the
// registration request.
type registrationCache struct {
	base      http.RoundTripper
	store     *store
	serverURL string
	logger    *slog.Logger
}

func isRegistration(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	return mt == "application/json"
}

// RoundTrip implements http.RoundTripper.
func (c *registrationCache) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isRegistration(req) {
		return c.base.RoundTrip(req)
	}
	body, err := req.GetBody()
	if err != nil {
		return c.base.RoundTrip(req)
	}
	reqBody, err := io.ReadAll(io.LimitReader(body, maxRegistrationBytes))
	body.Close()
	if err != nil {
		return c.base.RoundTrip(req)
	}
	endpoint := req.URL.String()

	if cached := c.lookup(endpoint, reqBody); cached != nil {
		c.logger.Debug("oauth: reusing the stored client registration", "server", c.serverURL, "endpoint", endpoint)
		return &http.Response{
			Status:        "201 Created",
			StatusCode:    http.StatusCreated,
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        http.Header{"Content-Type": {"application/json"}},
			Body:          io.NopCloser(bytes.NewReader(cached)),
			ContentLength: int64(len(cached)),
			Request:       req,
		}, nil
	}

	resp, err := c.base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK) {
		return resp, err
	}
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, maxRegistrationBytes))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err != nil {
		return resp, nil // the handler reports the truncated body
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if json.Unmarshal(respBody, &reg) != nil || reg.ClientID == "" {
		return resp, nil // the handler reports the bad response
	}
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	json.Unmarshal(reqBody, &meta)
	err = c.store.update(c.serverURL, func(rec *record) (bool, error) {
		if len(meta.RedirectURIs) > 0 {
			// Reuse the registered redirect URI's port next time.
			rec.RedirectURL = meta.RedirectURIs[0]
		}
		rec.Registrations = slices.DeleteFunc(rec.Registrations, func(r registration) bool { return r.Endpoint == endpoint })
		rec.Registrations = append(rec.Registrations, registration{Endpoint: endpoint, Request: reqBody, Response: respBody})
		return true, nil
	})
	if err != nil {
		c.logger.Warn("oauth: could not store the client registration; otter will register again next time",
			"server", c.serverURL, "err", err)
	}
	return resp, nil
}

// lookup returns the stored response to an identical registration request.
func (c *registrationCache) lookup(endpoint string, reqBody []byte) []byte {
	rec, err := c.store.load(c.serverURL)
	if err != nil || rec == nil {
		return nil
	}
	for _, r := range rec.Registrations {
		if r.Endpoint == endpoint && jsonEqual(r.Request, reqBody) {
			return r.Response
		}
	}
	return nil
}

// forget drops the stored registrations (after the server rejected the
// client).
func (c *registrationCache) forget() {
	err := c.store.update(c.serverURL, func(rec *record) (bool, error) {
		if len(rec.Registrations) == 0 {
			return false, nil
		}
		rec.Registrations = nil
		return true, nil
	})
	if err != nil {
		c.logger.Warn("oauth: could not drop the stored client registration", "server", c.serverURL, "err", err)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
