package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/servers"
)

// envOrderServer makes the test binary the ordered server on stdio.
const envOrderServer = "OTTER_TEST_ORDER_SERVER"

func init() {
	if os.Getenv(envOrderServer) == "" {
		return
	}
	recordPid(os.Getpid())
	srv := newOrderServer()
	if os.Getenv(envOrderServer) != "modern" {
		speakLegacy(srv)
	}
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serverOrder is the order in which the ordered server lists properties:
// not alphabetical, so that a client that sorts them shows them otherwise.
var serverOrder = []string{"zeta", "alpha", "mid"}

// orderedSchema is an object schema whose properties marshal in
// serverOrder, as a Go server's schema made with jsonschema.For does.
func orderedSchema(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "object",
		Description: desc,
		Properties: map[string]*jsonschema.Schema{
			"zeta":  {Type: "string", Title: "Zeta"},
			"alpha": {Type: "integer", Default: json.RawMessage(`7`)},
			"mid":   {Type: "boolean"},
		},
		PropertyOrder: serverOrder,
	}
}

// newOrderServer is a server whose tool input and output schemas and
// elicitation schemas list their properties in serverOrder. Its ask tool
// elicits with a server-to-client request; its ask_mrtr tool, for the
// 2026-07-28 protocol, through the input requests of its result.
func newOrderServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "ordered", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "form", InputSchema: orderedSchema("input"), OutputSchema: orderedSchema("output")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"zeta": "z"}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Details?", RequestedSchema: orderedSchema("elicit")})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res.Content)
			return text(res.Action + " " + string(b)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "ask_mrtr", InputSchema: objectSchema(nil)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if resp, ok := req.Params.InputResponses["details"]; ok {
				b, _ := json.Marshal(resp)
				return text(string(b)), nil
			}
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{
				"details": &sdk.ElicitParams{Message: "Details?", RequestedSchema: orderedSchema("mrtr")},
			}}, nil
		})
	return srv
}

// propertyNames returns the keys of raw's "properties" object in the order
// they are written.
func propertyNames(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	fail := func(err error) []string {
		t.Fatalf("schema %s: %v", raw, err)
		return nil
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail(fmt.Errorf("not an object: %v %v", tok, err))
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if key != "properties" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return fail(fmt.Errorf("properties is not an object: %v %v", tok, err))
		}
		var names []string
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			names = append(names, name.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
		return names
	}
	return fail(fmt.Errorf("no properties"))
}

// assertServerOrder checks that the front ends get what the server wrote:
// the tool's schemas and the elicitation's schema in serverOrder.
func assertServerOrder(t *testing.T, h *harness, el *eliciter, server string, elicitTools ...string) {
	t.Helper()
	e, ok := h.set.Lookup("mcp__" + server + "__form")
	if !ok {
		t.Fatalf("%s: the form tool is not in the set", server)
	}
	info := e.Tool.Info()
	if got := propertyNames(t, info.InputSchema); !slices.Equal(got, serverOrder) {
		t.Errorf("%s: input schema properties %v, want the server's order %v; schema %s", server, got, serverOrder, info.InputSchema)
	}
	if got := propertyNames(t, info.OutputSchema); !slices.Equal(got, serverOrder) {
		t.Errorf("%s: output schema properties %v, want the server's order %v", server, got, serverOrder)
	}
	var schema map[string]any
	if err := json.Unmarshal(info.InputSchema, &schema); err != nil || schema["description"] != "input" {
		t.Errorf("%s: input schema %s is not the server's", server, info.InputSchema)
	}
	for _, name := range elicitTools {
		el.mu.Lock()
		el.got = nil
		el.mu.Unlock()
		got := h.callText(server, name, `{}`)
		// The default the schema gives fills the field the reply left out.
		if !strings.Contains(got, `"alpha":7`) || !strings.Contains(got, `"zeta":"ada"`) {
			t.Errorf("%s %s: result %q lacks the reply and the schema's default", server, name, got)
		}
		el.mu.Lock()
		reqs := el.got
		el.mu.Unlock()
		if len(reqs) != 1 {
			t.Fatalf("%s %s: %d elicitation requests, want 1", server, name, len(reqs))
		}
		if got := propertyNames(t, reqs[0].Schema); !slices.Equal(got, serverOrder) {
			t.Errorf("%s %s: elicitation schema properties %v, want the server's order %v; schema %s", server, name, got, serverOrder, reqs[0].Schema)
		}
	}
}

func orderEliciter() *eliciter {
	return &eliciter{reply: ask.ElicitReply{Action: ask.Accept, Content: map[string]any{"zeta": "ada"}}}
}

// speakLegacy makes srv speak the 2025-11-25 protocol, whose elicitation is
// a request from the server (see newTestServer).
func speakLegacy(srv *sdk.Server) {
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "server/discover" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			}
			return next(ctx, method, req)
		}
	})
}

func TestSchemaOrderRemote(t *testing.T) {
	legacy := newOrderServer()
	speakLegacy(legacy)
	streamable := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return legacy }, nil))
	t.Cleanup(streamable.Close)
	modern := newOrderServer()
	modernHTTP := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return modern }, nil))
	t.Cleanup(modernHTTP.Close)
	sse := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return legacy }, nil))
	t.Cleanup(sse.Close)

	el := orderEliciter()
	h := newHarness(t, configOf(
		remote("http", config.TransportHTTP, streamable.URL),
		remote("modern", config.TransportHTTP, modernHTTP.URL),
		remote("sse", config.TransportSSE, sse.URL),
	), servers.Options{Eliciter: el})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertServerOrder(t, h, el, "http", "ask")
	assertServerOrder(t, h, el, "modern", "ask_mrtr")
	assertServerOrder(t, h, el, "sse", "ask")
}

func TestSchemaOrderStdio(t *testing.T) {
	orderServer := func(name, protocol string) config.Server {
		srv := stdioServer(t, name, "")
		delete(srv.Env, envMode)
		srv.Env[envOrderServer] = protocol
		return srv
	}
	el := orderEliciter()
	h := newHarness(t, configOf(orderServer("stdio", "legacy"), orderServer("modern", "modern")), servers.Options{Eliciter: el})
	h.m.Start(context.Background())
	if err := h.m.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertServerOrder(t, h, el, "stdio", "ask")
	assertServerOrder(t, h, el, "modern", "ask_mrtr")
}

// A schema already in canonical order, or none at all, needs no entry; a
// reordered one is restored.
func TestSchemaOrderRecord(t *testing.T) {
	o := newSchemaOrder()
	o.record(json.RawMessage(`{"properties":{"a":{},"b":{}},"type":"object"}`))
	o.record(json.RawMessage(`true`))
	o.record(json.RawMessage(`{"type":`))
	if len(o.orig) != 0 {
		t.Errorf("entries for canonical, non-object and malformed schemas: %v", o.orig)
	}
	orig := "{\n  \"type\": \"object\",\n  \"properties\": {\"b\": {}, \"a\": {}}\n}"
	o.record(json.RawMessage(orig))
	canonical := json.RawMessage(`{"properties":{"a":{},"b":{}},"type":"object"}`)
	if got := string(o.restore(canonical)); got != `{"type":"object","properties":{"b":{},"a":{}}}` {
		t.Errorf("restore = %s, want the server's order, compacted", got)
	}
	if got := string(o.restore(json.RawMessage(`{"x":1}`))); got != `{"x":1}` {
		t.Errorf("restore of an unknown schema = %s, want it unchanged", got)
	}
	var none *schemaOrder
	if got := string(none.restore(canonical)); got != string(canonical) {
		t.Errorf("restore without a schemaOrder = %s", got)
	}
}

// reordered returns a schema with properties p<i> and q, q written first:
// never in canonical order.
func reordered(i int, pad int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"properties":{"q":{},"p%d":{"description":%q}}}`, i, strings.Repeat("x", pad)))
}

func canonicalOf(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func elicitMessage(id int, schema string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{"message":"?","requestedSchema":%s}}`, id, schema)
}

// tapThrough reads stream through a tap of the given content type, one byte
// per Read (the worst split there is), and checks it comes out unchanged.
func tapThrough(t *testing.T, o *schemaOrder, contentType, stream string) {
	t.Helper()
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {contentType}},
		Body: io.NopCloser(iotest.OneByteReader(strings.NewReader(stream)))}
	o.tap(resp)
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != stream {
		t.Fatalf("the tap changed the stream: %d bytes in, %d out", len(stream), len(got))
	}
}

// fakeConn returns its messages one by one.
type fakeConn struct {
	sdk.Connection
	msgs []jsonrpc.Message
}

func (c *fakeConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(c.msgs) == 0 {
		return nil, io.EOF
	}
	m := c.msgs[0]
	c.msgs = c.msgs[1:]
	return m, nil
}

func TestSchemaOrderConn(t *testing.T) {
	id := func(n int64) jsonrpc.ID { i, _ := jsonrpc.MakeID(float64(n)); return i }
	msgs := []jsonrpc.Message{
		&jsonrpc.Request{ID: id(1), Method: "elicitation/create", Params: json.RawMessage(`{"requestedSchema":{"properties":{"b":{},"a":{}}}}`)},
		&jsonrpc.Request{ID: id(2), Method: "elicitation/create", Params: json.RawMessage(`{"requestedSchema":`)},
		&jsonrpc.Response{ID: id(3), Result: json.RawMessage(`{"tools":[{"inputSchema":{"properties":{"z":{},"y":{}}}}`)},
		&jsonrpc.Response{ID: id(4), Result: json.RawMessage(`{"tools":[{"inputSchema":{"properties":{"n":{},"m":{}}}}]}`)},
		&jsonrpc.Response{ID: id(5), Result: json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("inputSchema", 1<<20) + `"}]}`)},
	}
	o := newSchemaOrder()
	c := &observedConn{Connection: &fakeConn{msgs: slices.Clone(msgs)}, obs: &sdkObserver{order: o}}
	for i, want := range msgs {
		got, err := c.Read(context.Background())
		if err != nil || got != want {
			t.Fatalf("message %d: got %v, %v; want it unchanged", i, got, err)
		}
	}
	if _, err := c.Read(context.Background()); err != io.EOF {
		t.Errorf("after the messages: %v, want EOF", err)
	}
	for _, want := range []string{`{"properties":{"b":{},"a":{}}}`, `{"properties":{"n":{},"m":{}}}`} {
		if got := o.restore(canonicalOf(t, json.RawMessage(want))); string(got) != want {
			t.Errorf("restore = %s, want %s", got, want)
		}
	}
	if len(o.orig) != 2 {
		t.Errorf("%d entries, want 2", len(o.orig))
	}
}
