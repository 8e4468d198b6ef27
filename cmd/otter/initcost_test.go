package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// TestOwnPackagesInitCheaply: none of otter's own packages does work at
// start-up that only some commands need — a regexp compiled into a
// package-level variable, a table built eagerly — since package
// initialisation runs before every command, `otter --version` included
// (the startup benchmark). It reads the runtime's own account
// (GODEBUG=inittrace=1: bytes allocated by each package's init), which does
// not depend on the machine's speed or load. Before, the schema package's
// messages compiled 22 regexps at start (270 KB), the tool package's 55 KB.
func TestOwnPackagesInitCheaply(t *testing.T) {
	const limit = 32 << 10 // the largest today is tui's styles, 16 KB
	cmd := exec.Command(testpeer.Otter(t), "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("otter --version: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (github\.com/otter-sh/otter/\S+) @.*?, (\d+) bytes, (\d+) allocs$`)
	found := line.FindAllStringSubmatch(string(out), -1)
	if len(found) == 0 {
		t.Fatalf("no init lines of otter's packages in:\n%.2000s", out)
	}
	for _, m := range found {
		if n, _ := strconv.Atoi(m[2]); n > limit {
			t.Errorf("%s allocates %d bytes (%s allocations) at start-up, over %d: make that work happen on first use (sync.OnceValue)", m[1], n, m[3], limit)
		}
	}
}
