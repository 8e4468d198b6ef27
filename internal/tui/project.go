package tui

// The person's project in the conversation: `!` shell lines, @path files
// (Tab completion), /memory (the instruction files), and the first message
// given on the command line.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/instructions"
	"github.com/otter-sh/otter/internal/shellline"
)

type (
	initialPromptMsg struct{ text string }
	shellOutputMsg   struct {
		it   *toolItem
		view string
	}
	shellDoneMsg struct {
		it  *toolItem
		res shellline.Result
		err error
	}
	editorDoneMsg struct {
		path string
		err  error
	}
)

// projectMsg handles the messages of this file; ok is false for others.
func (m *model) projectMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case initialPromptMsg:
		if len(m.questions) > 0 || m.panel != nil {
			// The trust prompt first: the message waits in the input.
			m.input.SetValue(msg.text)
			m.hint = "your message is in the input: enter sends it"
			return nil, true
		}
		if n := len(m.history); n == 0 || m.history[n-1] != msg.text {
			m.history = append(m.history, msg.text)
			appendHistory(m.ui.opts.HistoryFile, m.history)
			m.histPos = len(m.history)
		}
		return m.chat(msg.text), true
	case shellOutputMsg:
		msg.it.shellOutput(msg.view)
		return nil, true
	case shellDoneMsg:
		m.calls--
		delete(m.toolItems, msg.it.id)
		msg.it.shellDone(msg.res, msg.err)
		return nil, true
	case editorDoneMsg:
		if msg.err != nil {
			m.notice(itemError, fmt.Sprintf("editing %s: %v", msg.path, msg.err))
		} else {
			m.notice(itemInfo, fmt.Sprintf("%s saved: the next message reads it", msg.path))
		}
		return nil, true
	}
	return nil, false
}

// shellOutput shows the last lines of a running shell line's output.
func (t *toolItem) shellOutput(view string) {
	if !t.finished() {
		t.result = tailLines(view, shellShownLines)
	}
}

// shellDone gives a shell line its outcome: how it exited, the end of its
// output, and where the whole output went when the model gets it cut.
func (t *toolItem) shellDone(res shellline.Result, err error) {
	t.cancel = nil
	t.elapsed = time.Since(t.start)
	if err != nil {
		t.state, t.result = toolFailed, err.Error()
		return
	}
	t.result = tailLines(res.Output, shellShownLines)
	switch {
	case res.Stopped:
		t.state = toolCanceled
	case res.ExitCode == 0:
		t.state = toolOK
	default:
		t.state = toolFailed
	}
	t.note(itemInfo, res.Status()+" · the command and its output go to the model with your next message")
	if res.Spill != "" {
		t.note(itemInfo, fmt.Sprintf("the output was cut to its first and last lines for the model; the whole output (%s) is in %s", attach.Size(int(res.Bytes)), res.Spill))
	}
}

// shellShownLines is how many of a shell line's last lines its block
// shows: like a terminal, the end is what matters while it runs.
const shellShownLines = 20

// tailLines is the last n lines of s, after a line counting the others.
func tailLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return fmt.Sprintf("… %d lines above\n", len(lines)-n) + strings.Join(lines[len(lines)-n:], "\n")
}

// shellLine runs a `!` line (the person's own command) in the working
// directory; Esc or ctrl+c stops it.
func (m *model) shellLine(line string) tea.Cmd {
	line = strings.TrimSpace(line)
	if line == "" {
		m.notice(itemInfo, "! runs a shell command here: !ls -la (its output goes to the model with your next message)")
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.callSeq++
	it := &toolItem{id: fmt.Sprintf("!-%d", m.callSeq), name: "!", args: line,
		start: time.Now(), rawCall: true, cancel: cancel}
	m.tr.add(it)
	m.toolItems[it.id] = it
	m.calls++
	m.follow()
	ui, conv := m.ui, m.conv
	return tea.Batch(func() tea.Msg {
		res, err := conv.RunShell(ctx, line, func(view string) { ui.send(shellOutputMsg{it, view}) })
		cancel()
		return shellDoneMsg{it: it, res: res, err: err}
	}, m.startSpinner())
}

// projectCommand runs /memory; ok is false for other commands.
func (m *model) projectCommand(cmd, rest string) (tea.Cmd, bool) {
	if cmd != "/memory" {
		return nil, false
	}
	set := m.app.Instructions()
	if rest != "" {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > len(set.Files) {
			m.notice(itemError, fmt.Sprintf("/memory %s: give the number of a file /memory lists (1–%d)", rest, len(set.Files)))
			return nil, true
		}
		return m.openEditor(set.Files[n-1].Path), true
	}
	m.notice(itemInfo, memoryText(set))
	return nil, true
}

// memoryText lists the instruction files for /memory.
func memoryText(set instructions.Set) string {
	var b strings.Builder
	if len(set.Files) == 0 {
		b.WriteString("No instruction files are loaded. otter reads AGENTS.md (else CLAUDE.md, GEMINI.md) from ~/.config/otter and from the project root down to this directory.")
	} else {
		b.WriteString("Instruction files sent to the model, in order:\n")
		for i, f := range set.Files {
			cut := ""
			if f.Cut {
				cut = fmt.Sprintf(" (cut at the %s cap)", instructions.KiB(set.MaxBytes))
			}
			fmt.Fprintf(&b, "  %d. %s  %s, ~%d tokens, %s%s\n", i+1, f.Path, attach.Size(int(f.Size)), f.Tokens(), f.Scope, cut)
		}
		b.WriteString("/memory N opens file N in $EDITOR.")
	}
	if len(set.Held) > 0 {
		fmt.Fprintf(&b, "\nNot read until you trust this project (/trust): %s", strings.Join(set.Held, ", "))
	}
	for _, err := range set.Errors {
		fmt.Fprintf(&b, "\n%v", err)
	}
	return b.String()
}

// openEditor opens path in $VISUAL or $EDITOR (else vi), the TUI paused.
func (m *model) openEditor(path string) tea.Cmd {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	c := exec.Command("/bin/sh", "-c", editor+` "$1"`, "editor", path)
	return tea.ExecProcess(c, func(err error) tea.Msg { return editorDoneMsg{path: path, err: err} })
}

// fileCandidates completes the @path word being typed.
func (m *model) fileCandidates(word string) []string {
	if !strings.HasPrefix(word, "@") || strings.HasPrefix(word, `@"`) {
		return nil
	}
	var out []string
	for _, p := range attach.CompletePath(m.ctx, m.app.WorkDir, strings.TrimPrefix(word, "@")) {
		out = append(out, attach.QuotePath(p))
	}
	return out
}

// outsideHint words an @path outside the project for the person.
func outsideHint(err error) string {
	var oe *attach.OutsideError
	if !errors.As(err, &oe) {
		return ""
	}
	return "\npress enter to send the message again and attach " + cmp.Or(oe.Target, oe.Path) + " anyway"
}
