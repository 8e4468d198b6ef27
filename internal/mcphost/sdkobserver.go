package mcphost

// Work-arounds for the go-sdk (v1.x), in one place. Each mends a behaviour
// of the SDK that otter cannot change from outside, and each can go when
// the SDK changes:
//
//   - Property order (schemaorder.go). The SDK decodes the schemas of
//     tools/list results and elicitation requests into map[string]any, and
//     re-encoding a map sorts its keys, so the order a server lists a
//     form's fields in is lost. The observer records each schema's bytes as
//     they arrive and restores them. It can go when sdk.Tool.InputSchema,
//     OutputSchema and sdk.ElicitParams.RequestedSchema keep the server's
//     JSON (json.RawMessage or an ordered type).
//   - Tools that need tasks (tasks.go). The SDK does not decode a tool's
//     execution.taskSupport; the observer notes the tools that require
//     tasks from the same tools/list results. It can go when sdk.Tool has
//     the execution field (and then when the SDK's client calls tasks).
//   - Cancellations on close (cancel.go). The SDK sends
//     notifications/cancelled from a goroutine of its own after the call has
//     returned, so a session closed right after loses it; the observer
//     counts the ones owed and written, and closing waits for them briefly.
//     It can go when the SDK sends the notification before the call returns
//     by default (today only with MCPGODEBUG=blockingcancelnotify=1, read
//     when the SDK's package is initialised, before otter could set it).
//   - Large JSON bodies (bigmessage.go). The streamable transport reads
//     an application/json response whole and decodes it in several copies
//     (a 200 MiB result cost 2 GB over stdio, where otter's filter now
//     shrinks it); the observer hands it such a body through the same
//     shrinker. It can go when the SDK bounds a body as it bounds an SSE
//     event (16 MiB), and otter still wants a longer one kept in a file.
//
// One sdkObserver belongs to one connection (conn.obs) and sees its
// messages where the SDK lets otter see them: over stdio by wrapping the
// transport's connection (wrap); over HTTP and SSE in the
// http.RoundTripper (headerTransport calls tap and postsCancelled), since
// the streamable transport's connection has unexported methods the SDK
// relies on (the protocol version header, the standalone SSE stream),
// which a wrapper would hide; the requests the client sends through a
// sending middleware (watch). A nil *sdkObserver observes nothing and
// restores nothing (Probe connects without one).

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkObserver watches one connection's traffic for the work-arounds above.
type sdkObserver struct {
	order   *schemaOrder
	cancels *cancelWatch
	// spill makes the file a message too large to keep is written to
	// (Manager.spillFile).
	spill func() (*os.File, error)
}

func newSDKObserver() *sdkObserver {
	return &sdkObserver{order: newSchemaOrder(), cancels: newCancelWatch()}
}

// shrinkLarge makes the body of resp, a JSON answer of an MCP server,
// reach the SDK shrunk when it is longer than keepMessageBytes.
func (o *sdkObserver) shrinkLarge(resp *http.Response) {
	if o == nil || o.spill == nil || resp.Body == nil || resp.StatusCode/100 != 2 {
		return
	}
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	if strings.EqualFold(strings.TrimSpace(ct), "application/json") {
		resp.Body = &shrinkingBody{rc: resp.Body, create: o.spill}
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
}

// watch makes client count the requests that end with their context.
func (o *sdkObserver) watch(client *sdk.Client) {
	if o != nil {
		client.AddSendingMiddleware(o.cancels.middleware)
	}
}

// wrap makes t's connection (a stdio transport's) show its messages to o.
func (o *sdkObserver) wrap(t sdk.Transport) sdk.Transport {
	if o == nil {
		return t
	}
	return &observedTransport{Transport: t, obs: o}
}

// received observes a message from the server.
func (o *sdkObserver) received(msg jsonrpc.Message) {
	if o != nil {
		o.order.observe(msg)
	}
}

// written observes a message otter wrote (or failed to write) to the
// server.
func (o *sdkObserver) written(msg jsonrpc.Message) {
	if o != nil && isCancelled(msg) {
		o.cancels.notificationSent()
	}
}

// postsCancelled reports whether req, a POST to an HTTP or SSE server,
// carries a notifications/cancelled o counts; cancelDelivered then counts
// it once the request is done with.
func (o *sdkObserver) postsCancelled(req *http.Request) bool {
	return o != nil && postsCancelled(req)
}

func (o *sdkObserver) cancelDelivered() { o.cancels.notificationSent() }

// tap makes resp's body, an HTTP or SSE server's answer, show the messages
// in it to o as the SDK reads them.
func (o *sdkObserver) tap(resp *http.Response) {
	if o != nil {
		o.order.tap(resp)
	}
}

// restore returns the server's own bytes of a schema the SDK re-encoded as
// canonical, or canonical when it has none.
func (o *sdkObserver) restore(canonical json.RawMessage) json.RawMessage {
	if o == nil {
		return canonical
	}
	return o.order.restore(canonical)
}

// requiresTasks reports whether the server's tool called name can only be
// called as a task.
func (o *sdkObserver) requiresTasks(name string) bool {
	return o != nil && o.order.requiresTasks(name)
}

// flushCancels gives the notifications/cancelled still owed up to timeout
// to go out, unless the connection is gone (ended or exited is closed).
func (o *sdkObserver) flushCancels(timeout time.Duration, ended, exited <-chan struct{}) {
	if o != nil {
		o.cancels.flush(timeout, ended, exited)
	}
}

// observedTransport shows its connection's messages to obs: for stdio,
// whose connection has nothing the SDK looks for beyond sdk.Connection.
type observedTransport struct {
	sdk.Transport
	obs *sdkObserver
}

func (t *observedTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &observedConn{Connection: conn, obs: t.obs}, nil
}

type observedConn struct {
	sdk.Connection
	obs *sdkObserver
}

func (c *observedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.obs.received(msg)
	}
	return msg, err
}

func (c *observedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	c.obs.written(msg)
	return err
}
