package oauth

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// ErrNoBrowser is returned (wrapped) by OpenBrowser when there is no way to
// open a browser here, e.g. in an SSH session without $BROWSER.
var ErrNoBrowser = errors.New("no browser available")

// OpenBrowser opens url in the person's browser. Like git, gh and Python's
// webbrowser module it honours $BROWSER: a command, possibly with arguments,
// or several separated by colons, tried in order; "%s" in a command is
// replaced by the URL, otherwise the URL is its last argument. Without
// $BROWSER it uses the platform's opener (xdg-open, open, or the Windows URL
// handler). It does not wait for the browser to exit.
func OpenBrowser(url string) error {
	if b := os.Getenv("BROWSER"); strings.TrimSpace(b) != "" {
		return openWith(b, url)
	}
	switch runtime.GOOS {
	case "darwin":
		return start(exec.Command("open", url))
	case "windows":
		return start(exec.Command("rundll32", "url.dll,FileProtocolHandler", url))
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return fmt.Errorf("%w: no graphical display and $BROWSER is not set", ErrNoBrowser)
		}
		if _, err := exec.LookPath("xdg-open"); err != nil {
			return fmt.Errorf("%w: xdg-open is not installed and $BROWSER is not set", ErrNoBrowser)
		}
		return start(exec.Command("xdg-open", url))
	}
}

// openWith runs the first command of the colon-separated list browsers that
// starts.
func openWith(browsers, url string) error {
	var errs []error
	for _, b := range strings.Split(browsers, ":") {
		fields := strings.Fields(b)
		if len(fields) == 0 {
			continue
		}
		args := fields[1:]
		substituted := false
		for i, a := range args {
			if strings.Contains(a, "%s") {
				args[i] = strings.ReplaceAll(a, "%s", url)
				substituted = true
			}
		}
		if !substituted {
			args = append(args, url)
		}
		err := start(exec.Command(fields[0], args...))
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return fmt.Errorf("%w: $BROWSER names no command", ErrNoBrowser)
	}
	return fmt.Errorf("%w: $BROWSER: %w", ErrNoBrowser, errors.Join(errs...))
}

// start starts cmd without a terminal and reaps it in the background.
func start(cmd *exec.Cmd) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
