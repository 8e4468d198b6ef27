// Command otter-sandbox is otter's launcher for the programs it confines
// (stdio MCP servers, the model's commands): `otter-sandbox
// __otter-sandbox-exec POLICY PATH ARGV0 ARGS…` restricts itself by POLICY
// and execs PATH (package sandbox). otter can do the same itself, but its
// binary takes 25–35 ms to start where this one takes a few, on every
// server's start; the build (scripts/build.sh) puts it beside otter and
// records its build ID in otter, which runs it only if that matches
// (sandbox.Launcher).
package main

import (
	"fmt"
	"os"

	"github.com/otter-sh/otter/internal/sandbox"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != sandbox.LauncherArg {
		fmt.Fprintf(os.Stderr, "otter-sandbox is started by otter, to confine the programs it runs; it is not a command to run by hand\n")
		os.Exit(2)
	}
	os.Exit(sandbox.Main(os.Args[2:]))
}
