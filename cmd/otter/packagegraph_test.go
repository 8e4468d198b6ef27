package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The front ends reach servers and sessions only through internal/app:
// neither they nor anything they import links in the MCP client manager
// or the session database (app builds those through app.Parts, which this
// command passes), and the agent does not read the config file. The server
// of `otter mcp serve` (internal/serve) is the headless front end's alone:
// the core and the TUI do not link it in. go list answers for the packages
// as built, tests left out.
func TestFrontEndsReachServersAndSessionsOnlyThroughApp(t *testing.T) {
	const mod = "github.com/otter-sh/otter/"
	for _, tc := range []struct {
		pkg    string
		forbid []string
	}{
		{"internal/tui", []string{"internal/mcphost", "internal/session", "internal/serve"}},
		{"internal/cli", []string{"internal/mcphost", "internal/session"}},
		{"internal/app", []string{"internal/mcphost", "internal/session", "internal/serve"}},
		{"internal/agent", []string{"internal/config"}},
	} {
		out, err := exec.Command("go", "list", "-deps", mod+tc.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tc.pkg, err, out)
		}
		deps := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			deps[strings.TrimPrefix(p, mod)] = true
		}
		if !deps["internal/ask"] && tc.pkg != "internal/agent" {
			t.Fatalf("go list -deps %s lists no internal/ask; is this the otter module?\n%s", tc.pkg, out)
		}
		for _, f := range tc.forbid {
			if deps[f] {
				t.Errorf("%s depends on %s", tc.pkg, f)
			}
		}
	}
}
