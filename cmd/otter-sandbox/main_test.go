package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLauncherStaysSmall: the launcher exists to start in a few
// milliseconds before every server; it links the sandbox package, the
// Landlock and system-call libraries and Go's standard library, nothing
// else (a package of otter's, a provider SDK, a Markdown renderer would
// bring their package inits back to every server's start).
func TestLauncherStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	allowed := []string{
		"github.com/otter-sh/otter/cmd/otter-sandbox",
		"github.com/otter-sh/otter/internal/sandbox",
		"github.com/landlock-lsm/go-landlock/",
		"golang.org/x/sys/unix",
		"golang.org/x/net/bpf",
		"kernel.org/pub/linux/libs/security/libcap/psx",
	}
	n := 0
	for _, p := range strings.Fields(string(out)) {
		n++
		ok := false
		for _, a := range allowed {
			if p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("otter-sandbox links %s: keep the launcher to the sandbox package and its system libraries", p)
		}
	}
	if n < 3 {
		t.Fatalf("go list -deps listed %d packages, not otter-sandbox's:\n%s", n, out)
	}
}
