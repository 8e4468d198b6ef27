//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"runtime"
)

// Available reports that programs cannot be confined on this system yet.
func Available() error {
	return fmt.Errorf("%w on %s yet (Linux only, with Landlock)", ErrUnavailable, runtime.GOOS)
}

func confineAndExec(Policy, string, []string) error { return Available() }

// NetworkByPort reports that TCP connections cannot be confined here.
func NetworkByPort() error { return Available() }
