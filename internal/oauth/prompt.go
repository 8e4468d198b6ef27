package oauth

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/charmbracelet/x/term"

	"github.com/otter-sh/otter/internal/ask"
)

// TerminalPrompter answers login prompts for the headless CLI. On a
// terminal it shows the URL and asks on out/in: open the browser, open the
// URL yourself, paste the redirect URL (for SSH sessions, where the browser
// cannot reach otter's loopback address), or later. Without a terminal it
// opens $BROWSER if set, and otherwise fails with a LoginRequiredError
// that says the login needs a terminal.
type TerminalPrompter struct {
	out      io.Writer
	terminal bool
	getenv   func(string) string

	mu    sync.Mutex // one prompt at a time
	lines chan lineResult
	in    *bufio.Reader
}

type lineResult struct {
	line string
	err  error
}

// NewTerminalPrompter returns a prompter reading answers from in and
// writing prompts to out (stderr for the CLI: never stdout, which may be
// piped). in counts as a terminal if it is an *os.File on one.
func NewTerminalPrompter(in io.Reader, out io.Writer) *TerminalPrompter {
	f, ok := in.(*os.File)
	return newTerminalPrompter(in, out, ok && f != nil && term.IsTerminal(f.Fd()), os.Getenv)
}

func newTerminalPrompter(in io.Reader, out io.Writer, terminal bool, getenv func(string) string) *TerminalPrompter {
	p := &TerminalPrompter{out: out, terminal: terminal, getenv: getenv}
	if in != nil {
		p.in = bufio.NewReader(in)
	}
	return p
}

// Login implements ask.LoginPrompter.
func (p *TerminalPrompter) Login(ctx context.Context, req ask.Login) (ask.LoginReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.terminal || p.in == nil {
		if strings.TrimSpace(p.getenv("BROWSER")) == "" {
			return ask.LoginReply{}, &LoginRequiredError{Server: req.Server,
				Reason:        "an OAuth login is needed, and otter cannot ask for it here (no terminal, $BROWSER not set)",
				NeedsTerminal: true}
		}
		fmt.Fprintf(p.out, "otter: %s needs a login; opening $BROWSER with:\n  %s\n", req.Server, req.AuthURL)
		return ask.LoginReply{Choice: ask.LoginOpenBrowser}, nil
	}

	fmt.Fprintf(p.out, "\notter: %s needs you to log in. Open this URL in a browser:\n\n  %s\n\n", req.Server, req.AuthURL)
	choices := "[Enter] open the browser   u  I'll open the URL myself"
	if req.CanPasteRedirect {
		choices += "   p  paste the redirect URL (SSH)"
	}
	choices += "   q  later"
	fmt.Fprintf(p.out, "%s\n> ", choices)
	for range 3 {
		line, err := p.readLine(ctx)
		if err != nil {
			return ask.LoginReply{}, err
		}
		reply, ok, err := p.loginChoice(ctx, req, strings.TrimSpace(line))
		if err != nil || ok {
			return reply, err
		}
		fmt.Fprintf(p.out, "Not a choice. %s\n> ", choices)
	}
	fmt.Fprintln(p.out, "Logging in later.")
	return ask.LoginReply{Choice: ask.LoginLater}, nil
}

// loginChoice turns an answer to the login menu into a reply; ok is false
// for an answer that is not a choice.
func (p *TerminalPrompter) loginChoice(ctx context.Context, req ask.Login, line string) (ask.LoginReply, bool, error) {
	if req.CanPasteRedirect && (strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://")) {
		// The redirect address pasted straight at the menu (someone who
		// chose Enter over SSH and is still waiting): take it.
		return ask.LoginReply{Choice: ask.LoginPasteRedirect, RedirectURL: line}, true, nil
	}
	switch strings.ToLower(line) {
	case "", "o", "y", "yes":
		fmt.Fprintln(p.out, "Opening the browser; waiting for the login to finish…")
		return ask.LoginReply{Choice: ask.LoginOpenBrowser}, true, nil
	case "u":
		fmt.Fprintln(p.out, "Waiting for the login to finish in the browser…")
		return ask.LoginReply{Choice: ask.LoginShowURL}, true, nil
	case "p":
		if !req.CanPasteRedirect {
			return ask.LoginReply{}, false, nil
		}
		fmt.Fprint(p.out, "After the login, the browser ends on a page it cannot load (http://127.0.0.1:…).\nPaste that page's address here:\n> ")
		u, err := p.readLine(ctx)
		if err != nil {
			return ask.LoginReply{}, false, err
		}
		return ask.LoginReply{Choice: ask.LoginPasteRedirect, RedirectURL: strings.TrimSpace(u)}, true, nil
	case "q", "n", "no", "later":
		return ask.LoginReply{Choice: ask.LoginLater}, true, nil
	}
	return ask.LoginReply{}, false, nil
}

// readLine reads one line, giving up when ctx is done. A read abandoned by
// a cancelled ctx delivers its line to the next prompt.
func (p *TerminalPrompter) readLine(ctx context.Context) (string, error) {
	if p.lines == nil {
		p.lines = make(chan lineResult, 1)
		go p.readOne(p.lines)
	}
	select {
	case r := <-p.lines:
		p.lines = nil
		if r.err != nil && (r.err != io.EOF || r.line == "") {
			return "", fmt.Errorf("read the answer to the login prompt: %w", r.err)
		}
		return r.line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (p *TerminalPrompter) readOne(ch chan<- lineResult) {
	line, err := p.in.ReadString('\n')
	ch <- lineResult{strings.TrimRight(line, "\r\n"), err}
}
