//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"time"
)

// ErrNoIsolation is wrapped by CanIsolate's error.
var ErrNoIsolation = errors.New("a network namespace of its own is not available")

const probeArg = "--probe-isolation"

// CanIsolate reports that network namespaces are Linux's.
func CanIsolate(string) error {
	return fmt.Errorf("%w on %s", ErrNoIsolation, runtime.GOOS)
}

// Isolation is not available here; see isolate_linux.go.
type Isolation struct{}

// Isolate fails: see CanIsolate.
func Isolate(*exec.Cmd, Policy) (*Isolation, error) { return nil, CanIsolate("") }

func (*Isolation) Started()                                     {}
func (*Isolation) Listener(time.Duration) (net.Listener, error) { return nil, CanIsolate("") }
func (*Isolation) Close() error                                 { return nil }

// SeparateRoot does nothing here: see isolate_linux.go.
func SeparateRoot(*Policy) error { return nil }

func probeMain() error { return CanIsolate("") }
