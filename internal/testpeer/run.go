package testpeer

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Cmd is one run of a binary a test starts (the otter binary, mostly):
// the binary, and the directory, environment and stdin it runs with.
type Cmd struct {
	Path  string
	Dir   string   // "": the test's working directory
	Env   []string // nil: the test's environment
	Stdin string
}

// Outcome is what a run of a Cmd left: its output and exit status.
type Outcome struct {
	Stdout, Stderr string
	Code           int
}

// Run runs c with args until it exits, and returns its output and exit
// status. A run that could not start, or that ctx ended before it exited,
// fails the test.
func (c Cmd) Run(tb testing.TB, ctx context.Context, args ...string) Outcome {
	tb.Helper()
	cmd := exec.CommandContext(ctx, c.Path, args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin = strings.NewReader(c.Stdin)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Outcome{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		tb.Fatalf("run %s %q: %v", c.Path, args, err)
	}
	if ctx.Err() != nil {
		tb.Fatalf("%s %q did not finish: %v\nstderr:\n%s", c.Path, args, ctx.Err(), r.Stderr)
	}
	return r
}
