package cli

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/ask"
	"github.com/otter-sh/otter/internal/iostreams"
)

// The --elicit default follows the terminal: ask when stdin and stderr are
// one, decline otherwise; with stdin carrying the arguments the questions
// are asked on the terminal itself, and without one `--elicit ask` says so.
func TestElicitPolicyFollowsTheTerminal(t *testing.T) {
	t.Parallel()
	streams := func(tty bool, terminal string) *iostreams.IOStreams {
		s, in, _, _ := iostreams.Test()
		in.WriteString("d\n") // stdin declines
		s.SetStdinTTY(tty)
		s.SetStderrTTY(tty)
		if terminal != "" {
			s.SetTerminal(func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(terminal)), nil })
		}
		return s
	}
	req := ask.Elicitation{Server: "srv", Message: "Go on?", Mode: "url", URL: "https://example.com"}
	for _, tc := range []struct {
		name       string
		tty        bool
		terminal   string
		stdinUsed  bool
		elicit     string
		wantPolicy ElicitPolicy
		wantAction ask.ElicitAction
	}{
		{"no terminal", false, "", false, "", ElicitDecline, ask.Decline},
		{"terminal", true, "", false, "", ElicitAsk, ask.Decline},
		{"stdin holds the arguments", true, "a\n", true, "", ElicitDecline, ask.Decline},
		{"ask with stdin holding the arguments", true, "a\n", true, "ask", ElicitAsk, ask.Accept},
	} {
		p, closeFn, err := (&ConnOptions{Elicit: tc.elicit}).asker(streams(tc.tty, tc.terminal), tc.stdinUsed)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		reply, err := p.Elicit(t.Context(), req)
		closeFn()
		if p.Policy() != tc.wantPolicy || err != nil || reply.Action != tc.wantAction {
			t.Errorf("%s: policy %s, reply %+v, %v; want %s answering %s", tc.name, p.Policy(), reply, err, tc.wantPolicy, tc.wantAction)
		}
	}
	_, _, err := (&ConnOptions{Elicit: "ask"}).asker(streams(true, ""), true)
	if err == nil || !errors.Is(err, iostreams.ErrNoTerminal) || !strings.Contains(err.Error(), "no terminal to ask on") {
		t.Errorf("--elicit ask without a terminal: err = %v", err)
	}
}
