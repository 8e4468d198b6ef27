package mcphost

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth"
)

// TransportAuto is the transport of a server with a url that tries
// streamable HTTP first and falls back to the legacy SSE transport when the
// server rejects the initial POST with 400, 404 or 405, as the MCP spec's
// backwards-compatibility section describes. An empty transport with a url
// means the same.
const TransportAuto = config.TransportAuto

// transportName returns srv's effective transport.
func transportName(srv config.Server) string {
	switch {
	case srv.Transport != "":
		return srv.Transport
	case srv.Command != "":
		return config.TransportStdio
	case srv.URL != "":
		return TransportAuto
	}
	return ""
}

// headerTransport adds the configured headers to every request,
// remembers the status of the latest POST (for the SSE fallback: when
// connecting fails, that is the answer that failed it, also when an OAuth
// 401 came before it), and shows the server's messages and the
// notifications/cancelled it delivers to obs (see sdkObserver).
type headerTransport struct {
	base     http.RoundTripper
	headers  map[string]string
	obs      *sdkObserver
	lastPost atomic.Int32
	// authRetry: the caller (the streamable transport with an OAuth
	// handler) sends a POST answered 401 or 403 again once authorized.
	authRetry bool
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	cancelled := t.obs.postsCancelled(req)
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if cancelled && (err != nil || !t.authRetry ||
		resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		t.obs.cancelDelivered()
	}
	if err != nil {
		return resp, err
	}
	if req.Method == http.MethodPost {
		t.lastPost.Store(int32(resp.StatusCode))
	}
	t.obs.shrinkLarge(resp)
	t.obs.tap(resp)
	return resp, nil
}

func newHTTPClient(srv config.Server, obs *sdkObserver) (*http.Client, *headerTransport) {
	ht := &headerTransport{base: http.DefaultTransport, headers: srv.Headers, obs: obs}
	return &http.Client{Transport: ht}, ht
}

// newStreamableClient is newHTTPClient for the streamable transport, which
// runs h's authorization itself.
func newStreamableClient(srv config.Server, h auth.OAuthHandler, obs *sdkObserver) (*http.Client, *headerTransport) {
	client, ht := newHTTPClient(srv, obs)
	ht.authRetry = h != nil
	return client, ht
}

// newSSEClient is newHTTPClient for the legacy SSE transport, which has no
// OAuth support of its own: with h set, requests carry h's token and a 401
// or 403 runs h's authorization, as the streamable transport does itself.
func newSSEClient(srv config.Server, h auth.OAuthHandler, obs *sdkObserver) *http.Client {
	client, ht := newHTTPClient(srv, obs)
	if h != nil {
		ht.base = oauth.Transport(h, http.DefaultTransport)
	}
	return client
}

// remoteTransport builds the SDK transport of an http or sse server.
func remoteTransport(srv config.Server, kind string, h auth.OAuthHandler, obs *sdkObserver) (sdk.Transport, error) {
	if srv.URL == "" {
		return nil, configError{fmt.Errorf("no url configured for transport %q: set url", kind)}
	}
	switch kind {
	case config.TransportHTTP:
		client, _ := newStreamableClient(srv, h, obs)
		return &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, OAuthHandler: h}, nil
	case config.TransportSSE:
		return &sdk.SSEClientTransport{Endpoint: srv.URL, HTTPClient: newSSEClient(srv, h, obs)}, nil
	}
	return nil, configError{fmt.Errorf("unknown transport %q: use stdio, http, sse or auto", kind)}
}

// connectRemote connects to an http, sse or auto server, its traffic shown
// to obs (nil: to none).
func connectRemote(ctx, life context.Context, client *sdk.Client, srv config.Server, kind string, h auth.OAuthHandler, obs *sdkObserver) (*sdk.ClientSession, string, error) {
	if kind != TransportAuto && kind != "" {
		t, err := remoteTransport(srv, kind, h, obs)
		if err != nil {
			return nil, kind, err
		}
		cs, err := client.Connect(ctx, detach(t, life), nil)
		return cs, kind, err
	}
	if srv.URL == "" {
		return nil, kind, configError{errors.New("no url configured: set url (or command for a stdio server)")}
	}
	httpClient, ht := newStreamableClient(srv, h, obs)
	t := &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: httpClient, OAuthHandler: h}
	cs, err := client.Connect(ctx, t, nil)
	if err == nil {
		return cs, config.TransportHTTP, nil
	}
	switch ht.lastPost.Load() {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
	default:
		return nil, config.TransportHTTP, err
	}
	st := &sdk.SSEClientTransport{Endpoint: srv.URL, HTTPClient: newSSEClient(srv, h, obs)}
	cs, sseErr := client.Connect(ctx, detach(st, life), nil)
	if sseErr != nil {
		return nil, config.TransportSSE, fmt.Errorf("streamable HTTP was refused (%w) and the SSE fallback failed too: %w", err, sseErr)
	}
	return cs, config.TransportSSE, nil
}

// detached makes a transport's connection outlive the context given to
// Connect (the startup timeout), which the legacy SSE transport would
// otherwise use for its event stream. Should the startup context end while
// the transport is still connecting, the connection attempt is abandoned.
// Once connected, the stream ends when the connection is closed, or at the
// latest lifeGrace after life (the server's supervisor) ends: closing the
// connection first gives owed notifications/cancelled their moment (see
// cancelWatch), and an SSE server only takes them while the stream is open.
type detached struct {
	sdk.Transport
	life context.Context
}

// lifeGrace is how long a detached connection outlives its life unless it
// is closed first; more than cancelFlushTimeout.
const lifeGrace = 2 * cancelFlushTimeout

func detach(t sdk.Transport, life context.Context) sdk.Transport {
	if _, ok := t.(*sdk.SSEClientTransport); !ok {
		return t
	}
	return &detached{t, life}
}

func (d *detached) Connect(ctx context.Context) (sdk.Connection, error) {
	connCtx, cancel := context.WithCancel(context.WithoutCancel(d.life))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := d.Transport.Connect(connCtx)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			conn.Close()
			return nil, ctx.Err()
		}
		return nil, err
	}
	stopLife := context.AfterFunc(d.life, func() {
		t := time.NewTimer(lifeGrace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-connCtx.Done():
		}
	})
	return &cancelConn{Connection: conn, cancel: func() {
		stopLife()
		cancel()
	}}, nil
}

// cancelConn releases its context when closed.
type cancelConn struct {
	sdk.Connection
	cancel func()
}

func (c *cancelConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
