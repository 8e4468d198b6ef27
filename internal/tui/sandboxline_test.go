package tui

import (
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/servers"
)

// /mcp's details say how a stdio server runs (with the hosts of its
// sandbox's list) and which of its tools are
// held back since pinned, with how to see and take the change; a tool
// name cannot bring an escape sequence to the screen.
func TestMCPPanelShowsSandboxAndHeldBackTools(t *testing.T) {
	on := app.ServerStatus{Name: "fs", Sandbox: &servers.SandboxStatus{On: true, Write: []string{"/proj", "/tmp"}, Network: false}}
	if got, want := sandboxLine(on), "sandbox: on · writes /proj, /tmp · no network"; got != want {
		t.Errorf("sandboxLine = %q, want %q", got, want)
	}
	hosts := app.ServerStatus{Name: "gh", Sandbox: &servers.SandboxStatus{On: true, Write: []string{"/proj"}, Hosts: []string{"api.github.com", "*.example.org"}}}
	if got, want := sandboxLine(hosts), "sandbox: on · writes /proj · network: only api.github.com, *.example.org (through otter's proxy)"; got != want {
		t.Errorf("sandboxLine = %q, want %q", got, want)
	}
	weaker := hosts
	weaker.Sandbox = &servers.SandboxStatus{On: true, Write: []string{"/proj"}, Hosts: []string{"api.github.com"}, Weaker: "no user namespaces\x1b[2J here"}
	if got, want := sandboxLine(weaker), "sandbox: on · writes /proj · network: only api.github.com (through otter's proxy) — confined less here: no user namespaces here"; got != want {
		t.Errorf("sandboxLine = %q, want %q", got, want)
	}
	off := app.ServerStatus{Name: "fs", Sandbox: &servers.SandboxStatus{Off: "sandbox.enabled = false"}}
	if got, want := sandboxLine(off), "sandbox: off (sandbox.enabled = false)"; got != want {
		t.Errorf("sandboxLine = %q, want %q", got, want)
	}
	if got := sandboxLine(app.ServerStatus{Name: "web"}); got != "" {
		t.Errorf("a remote server: sandboxLine = %q, want none", got)
	}
	held := app.ServerStatus{Name: "calc", HeldBack: []servers.HeldTool{{Name: "greet\x1b]0;pwned\x07"}, {Name: "add2", New: true}}}
	got := heldBackLine(held)
	for _, want := range []string{"changed since pinned: greet", "new: add2", "`otter mcp diff calc`", "`otter mcp approve calc`"} {
		if !strings.Contains(got, want) {
			t.Errorf("heldBackLine = %q, lacks %q", got, want)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("heldBackLine passes an escape sequence: %q", got)
	}
	if heldBackLine(app.ServerStatus{Name: "ok"}) != "" {
		t.Error("a server with nothing held back has a held-back line")
	}
}
