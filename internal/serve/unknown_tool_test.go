package serve

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkUnknownToolRecord checks the ledger after one call of an unknown
// tool followed by one call of echo: exactly one record each.
func checkUnknownToolRecord(t *testing.T, s *Server, client string) {
	t.Helper()
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 2 {
		t.Fatalf("audit has %d records, want 2 (the unknown tool, then echo once): %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Tool != "solve_captcha" || r.Outcome != OutcomeError || r.Code != codeUnknownTool || r.Client != client {
		t.Errorf("unknown tool record = %+v, want tool solve_captcha, outcome error, code %s, client %s", r, codeUnknownTool, client)
	}
	if !strings.Contains(r.Error, "solve_captcha") {
		t.Errorf("unknown tool record error = %q, want the SDK's message naming the tool", r.Error)
	}
	args := string(r.Arguments)
	if strings.Contains(args, "hunter22") || !strings.Contains(args, `"password":"****"`) || !strings.Contains(args, "example.com") {
		t.Errorf("unknown tool record arguments = %s, want the password masked and the rest kept", args)
	}
	if recs[1].Tool != "echo" || recs[1].Outcome != OutcomeOK || recs[1].Code != "" {
		t.Errorf("echo record = %+v, want one ok record", recs[1])
	}
}

func TestUnknownToolIsAuditedOverStdio(t *testing.T) {
	s := newTestServer(t, Options{})
	p := startStdio(t, s)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"solve_captcha","arguments":{"url":"https://example.com","password":"hunter22"}}}`)
	if m := p.next(); m["id"] != float64(2) || errorCodeOf(m) != -32602 {
		t.Fatalf("unknown tool: got %v, want a -32602 error", m)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	if m := p.next(); m["id"] != float64(3) || m["result"] == nil {
		t.Fatalf("echo: %v", m)
	}
	p.in.Close()
	p.waitDone()
	checkUnknownToolRecord(t, s, ClientStdio)
}

func TestUnknownToolIsAuditedOverHTTP(t *testing.T) {
	keys := []string{"key-one"}
	s := newTestServer(t, Options{APIKeys: keys})
	ts := startHTTP(t, s)
	cs := connectHTTP(t, ts.URL, keys[0], nil)
	ctx := t.Context()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "solve_captcha",
		Arguments: map[string]any{"url": "https://example.com", "password": "hunter22"}})
	if err == nil || !strings.Contains(err.Error(), "solve_captcha") {
		t.Fatalf("unknown tool over HTTP: err = %v, want the SDK's unknown tool error", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	checkUnknownToolRecord(t, s, keyClient(s.keys[0]))
	if r := readAudit(t, s.ledger.Path())[0]; r.Session == "" || r.Session != cs.ID() {
		t.Errorf("unknown tool record session = %q, want the MCP session %q", r.Session, cs.ID())
	}
}

// A tool name far beyond MCP's limit is cut short in the ledger.
func TestUnknownToolLongNameIsCut(t *testing.T) {
	s := newTestServer(t, Options{})
	cs := connectInMemory(t, s, nil)
	long := strings.Repeat("x", 10000)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: long}); err == nil {
		t.Fatal("an unknown tool was called without error")
	}
	recs := readAudit(t, s.ledger.Path())
	if len(recs) != 1 || len(recs[0].Tool) > maxAuditedName+len("…") || !strings.HasPrefix(recs[0].Tool, "xxx") {
		t.Errorf("audit = %+v, want one record with the name cut to %d bytes", recs, maxAuditedName)
	}
}
