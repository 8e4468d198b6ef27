package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// sandboxExec is macOS's launcher of a program under a Seatbelt profile.
const sandboxExec = "/usr/bin/sandbox-exec"

// seatbeltOptIn is the variable that turns the Seatbelt sandbox on: the
// profile (seatbelt.go) is written and its text tested, but it has not
// run on a Mac yet, and a mistake in it would stop every stdio server
// there; until it has, servers run unconfined unless a person asks.
const seatbeltOptIn = "OTTER_SANDBOX_SEATBELT"

// Available reports whether programs can be confined here, and if not,
// why (wrapping ErrUnavailable).
func Available() error {
	if os.Getenv(seatbeltOptIn) != "1" {
		return fmt.Errorf("%w on macOS by default yet: its Seatbelt profile is untested on a Mac (set %s=1 to try it)", ErrUnavailable, seatbeltOptIn)
	}
	return haveSandboxExec()
}

func haveSandboxExec() error {
	if _, err := os.Stat(sandboxExec); err != nil {
		return fmt.Errorf("%w: %s is missing", ErrUnavailable, sandboxExec)
	}
	return nil
}

// NetworkByPort: Seatbelt confines TCP to the proxy's address and port.
func NetworkByPort() error { return Available() }

// confineAndExec execs path under sandbox-exec with p's profile. (The
// launcher runs with the server's environment, which lacks the opt-in:
// otter checked it.)
func confineAndExec(p Policy, path string, argv []string) error {
	if err := haveSandboxExec(); err != nil {
		return err
	}
	args := append([]string{"sandbox-exec", "-p", seatbeltProfile(p), path}, argv[1:]...)
	if err := syscall.Exec(sandboxExec, args, os.Environ()); err != nil {
		return fmt.Errorf("starting %s under %s: %w", path, sandboxExec, err)
	}
	return nil
}
