package servebin

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"testing"
	"time"
)

// TestStdioNullIDGetsAnError: a request whose "id" is null gets a JSON-RPC
// error answer (-32600, id null), and the session goes on. Before, the
// SDK took it for a notification and the client waited forever.
func TestStdioNullIDGetsAnError(t *testing.T) {
	requireBinary(t)
	h := newHome(t, "")
	cmd := exec.Command(otterBin, "mcp", "serve")
	cmd.Dir, cmd.Env = h.dir, h.env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	next := func() map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stdout ended; stderr:\n%s", stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("stdout line is not JSON: %q", l)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer within 10 s; stderr:\n%s", stderr.String())
		}
		return nil
	}
	if m := next(); m["id"] != 1.0 {
		t.Fatalf("initialize answer = %v", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":null,"method":"ping"}`+"\n")
	m := next()
	e, _ := m["error"].(map[string]any)
	if id, present := m["id"]; !present || id != nil || e == nil || e["code"] != -32600.0 {
		t.Fatalf("answer to a request with id null = %v, want an error -32600 with id null", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	if m := next(); m["id"] != 2.0 || m["error"] != nil {
		t.Fatalf("the session did not go on: ping answered %v", m)
	}
}
