package mcphost

// Property order, one of the SDK work-arounds (see sdkobserver.go). A
// server lists a schema's properties in the order it means them to be
// shown (name, email, age), but the SDK decodes the schemas of tools/list
// results and elicitation requests into map[string]any, and re-encoding a
// map sorts its keys. So otter keeps the
// server's own bytes: a schemaOrder sees every incoming message as it
// arrives, and for the schemas in it records the original bytes under the
// re-encoded (canonical) form. Where otter then re-encodes the SDK's value,
// it looks the canonical bytes up and hands the front ends the original.
//
// A connection's sdkObserver hands it the messages, over stdio from the
// transport's connection, over HTTP from the response bodies (tap).

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Bounds of one connection's schemaOrder: a server cannot make it grow
// without limit. Past them the oldest entries go, and a schema that is not
// found is shown in the SDK's (alphabetical) order.
const (
	orderMaxEntries = 4096
	orderMaxBytes   = 8 << 20 // keys and originals together
	// orderMaxMessage bounds a message (an SSE event's data, a JSON body)
	// the HTTP tap buffers to look into; larger ones pass through unread.
	orderMaxMessage = 8 << 20
)

var (
	markElicit      = []byte(`"elicitation/create"`)
	markInputSchema = []byte(`"inputSchema"`)
)

// schemaOrder maps the canonical encoding of a schema (encoding/json of the
// value the SDK decoded) to the server's original bytes, compacted.
type schemaOrder struct {
	mu    sync.Mutex
	orig  map[string]json.RawMessage
	keys  []string // insertion order, oldest first
	bytes int
	// needsTasks holds the tools whose execution.taskSupport is
	// "required", which the SDK does not decode (see tasks.go).
	needsTasks map[string]bool
}

func newSchemaOrder() *schemaOrder {
	return &schemaOrder{orig: make(map[string]json.RawMessage)}
}

// restore returns the server's original bytes of the schema whose
// canonical encoding is canonical, or canonical when it has none.
func (o *schemaOrder) restore(canonical json.RawMessage) json.RawMessage {
	if o == nil {
		return canonical
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if orig, ok := o.orig[string(canonical)]; ok {
		return slices.Clone(orig)
	}
	return canonical
}

// record remembers raw, a schema as the server sent it.
func (o *schemaOrder) record(raw json.RawMessage) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return // only an object has properties to keep in order
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	canonical, err := json.Marshal(v)
	if err != nil {
		return
	}
	var orig bytes.Buffer
	if json.Compact(&orig, raw) != nil || bytes.Equal(orig.Bytes(), canonical) {
		return // already in the canonical order: nothing to restore
	}
	size := len(canonical) + orig.Len()
	if size > orderMaxBytes/4 {
		return
	}
	key := string(canonical)
	o.mu.Lock()
	defer o.mu.Unlock()
	if old, ok := o.orig[key]; ok {
		o.bytes += orig.Len() - len(old)
		o.orig[key] = orig.Bytes()
	} else {
		o.orig[key] = orig.Bytes()
		o.keys = append(o.keys, key)
		o.bytes += size
	}
	for len(o.keys) > orderMaxEntries || o.bytes > orderMaxBytes {
		k := o.keys[0]
		o.keys[0] = ""
		o.keys = o.keys[1:]
		o.bytes -= len(k) + len(o.orig[k])
		delete(o.orig, k)
	}
}

// observe records the schemas of an incoming message: the requested schema
// of an elicitation request, the input and output schemas of a tools/list
// result, and the requested schemas of the elicitations a multi-round-trip
// result asks for. It only decodes a message that can hold one of them.
func (o *schemaOrder) observe(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "elicitation/create" {
			o.recordElicit(m.Params)
		}
	case *jsonrpc.Response:
		if m.Error != nil || len(m.Result) == 0 {
			return
		}
		if bytes.Contains(m.Result, markInputSchema) {
			o.recordTools(m.Result)
		}
		if bytes.Contains(m.Result, markElicit) {
			o.recordInputRequests(m.Result)
		}
	}
}

func (o *schemaOrder) recordElicit(params json.RawMessage) {
	var p struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if json.Unmarshal(params, &p) == nil {
		o.record(p.RequestedSchema)
	}
}

func (o *schemaOrder) recordTools(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Execution    *toolExecution  `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	for _, t := range r.Tools {
		o.record(t.InputSchema)
		o.record(t.OutputSchema)
		o.recordExecution(t.Name, t.Execution)
	}
}

func (o *schemaOrder) recordInputRequests(result json.RawMessage) {
	var r struct {
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	for _, ir := range r.InputRequests {
		if ir.Method == "elicitation/create" {
			o.recordElicit(ir.Params)
		}
	}
}

// observeWire is observe for a message in its wire form (an HTTP body or an
// SSE event's data), decoded only when it mentions a schema it could hold.
func (o *schemaOrder) observeWire(data []byte) {
	if !bytes.Contains(data, markElicit) && !bytes.Contains(data, markInputSchema) {
		return
	}
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		o.observe(msg)
	}
}

// tap makes the body of resp, a response of an MCP server, pass the
// messages in it to o as the SDK reads them: a JSON body whole, an SSE
// stream event by event. What the SDK reads is unchanged.
func (o *schemaOrder) tap(resp *http.Response) {
	if o == nil || resp.Body == nil || resp.StatusCode/100 != 2 {
		return
	}
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	switch strings.ToLower(strings.TrimSpace(ct)) {
	case "text/event-stream":
		resp.Body = &sseTap{ReadCloser: resp.Body, order: o}
	case "application/json":
		resp.Body = &jsonTap{ReadCloser: resp.Body, order: o}
	}
}

// jsonTap buffers a JSON body (up to orderMaxMessage) and observes it when
// the reader reaches its end.
type jsonTap struct {
	io.ReadCloser
	order *schemaOrder
	buf   []byte
	over  bool // too large: not observed
	done  bool
}

func (t *jsonTap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if t.done {
		return n, err
	}
	if !t.over {
		if len(t.buf)+n > orderMaxMessage {
			t.over, t.buf = true, nil
		} else {
			t.buf = append(t.buf, p[:n]...)
		}
	}
	if err == io.EOF {
		t.done = true
		if !t.over {
			t.order.observeWire(t.buf)
		}
		t.buf = nil
	}
	return n, err
}

// sseTap follows a text/event-stream as the SDK's reader does: lines end
// in "\n" (trailing "\r"s dropped), the "data:" lines of an event join
// with "\n", and a blank line (or the end of the stream) ends the event,
// whose data it then observes. It reads no further than the SDK asks, and
// an event is observed before the read that completes it returns, so its
// schemas are recorded before the SDK can hand the message on.
type sseTap struct {
	io.ReadCloser
	order    *schemaOrder
	line     []byte // the line so far
	nonBlank bool   // the line so far has more than "\r"s
	data     []byte // the event's data so far
	hasData  bool
	skip     bool // the event is too large: not observed
	done     bool
}

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if t.done {
		return n, err
	}
	rest := p[:n]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.addToLine(rest)
			break
		}
		t.addToLine(rest[:i])
		t.endLine()
		rest = rest[i+1:]
	}
	if err != nil {
		t.done = true
		if err == io.EOF {
			if t.nonBlank {
				t.endLine()
			}
			t.endEvent()
		}
		t.line, t.data = nil, nil
	}
	return n, err
}

func (t *sseTap) addToLine(b []byte) {
	if !t.nonBlank && len(bytes.TrimLeft(b, "\r")) > 0 {
		t.nonBlank = true
	}
	if t.skip {
		return
	}
	if len(t.line)+len(b) > orderMaxMessage {
		t.skip = true
		return
	}
	t.line = append(t.line, b...)
}

func (t *sseTap) endLine() {
	line := t.line
	blank := !t.nonBlank
	t.line, t.nonBlank = t.line[:0], false
	if blank {
		t.endEvent()
		return
	}
	if t.skip {
		return
	}
	field, value, _ := bytes.Cut(bytes.TrimRight(line, "\r"), []byte{':'})
	if string(field) != "data" {
		return
	}
	value = bytes.TrimSpace(value)
	if len(t.data)+len(value)+1 > orderMaxMessage {
		t.skip = true
		return
	}
	if t.hasData {
		t.data = append(t.data, '\n')
	}
	t.data = append(t.data, value...)
	t.hasData = true
}

func (t *sseTap) endEvent() {
	if t.hasData && !t.skip {
		t.order.observeWire(t.data)
	}
	t.hasData, t.skip = false, false
	t.data = reuse(t.data)
	t.line = reuse(t.line)
}

// reuse empties a buffer for the next event; a large one is let go rather
// than held for the life of the stream.
func reuse(b []byte) []byte {
	if cap(b) > 64<<10 {
		return nil
	}
	return b[:0]
}
