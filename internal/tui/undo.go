package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
)

// /undo and /rewind: the conversation's turns taken back, with the files
// edit_file and write_file changed in them (app.Conversation.Undo and
// Rewind). Both wait while a turn runs.

// undoCommands are this file's slash commands.
var undoCommands = []string{"/undo", "/rewind"}

// undoCommand runs /undo and /rewind; ok is false for any other command.
func (m *model) undoCommand(cmd string) (tea.Cmd, bool) {
	if !slices.Contains(undoCommands, cmd) {
		return nil, false
	}
	if m.busy || m.calls > 0 {
		m.notice(itemError, cmd+" waits until otter has finished: press esc to stop it first")
		return nil, true
	}
	if cmd == "/undo" {
		return m.rewound(func(force bool) (app.Rewound, error) { return m.conv.Undo(m.ctx, force) }, false), true
	}
	msgs, err := m.conv.UserMessages(m.ctx)
	switch {
	case err != nil:
		m.notice(itemError, rewindError(err))
		return nil, true
	case len(msgs) == 0:
		m.notice(itemInfo, "nothing to rewind to: the conversation has no message of yours yet")
		return nil, true
	}
	m.panel = newRewindPicker(m, msgs)
	return nil, true
}

// rewound runs do (an undo or a rewind) and shows what it did. Files
// changed on disk since otter changed them are asked about first: do runs
// again, forced, only if the person says so. It returns the command that
// opens that question, from a panel (inPanel) or not.
func (m *model) rewound(do func(force bool) (app.Rewound, error), inPanel bool) tea.Cmd {
	r, err := do(false)
	var changed *app.ChangedOnDiskError
	if errors.As(err, &changed) {
		q := m.forceQuestion(changed, func() tea.Cmd { return m.showRewound(do(true)) })
		if inPanel {
			return func() tea.Msg { return openPanelMsg{q} }
		}
		m.panel = q
		return q.init()
	}
	return m.showRewound(r, err)
}

// forceQuestion asks whether to put files back that changed on disk since:
// yes runs force, no leaves everything as it is.
func (m *model) forceQuestion(e *app.ChangedOnDiskError, force func() tea.Cmd) *formModal {
	var files []string
	for _, p := range e.Paths {
		files = append(files, "  "+m.shownPath(p))
	}
	it, they := "it", "it is"
	if len(e.Paths) > 1 {
		it, they = "them", "they are"
	}
	heading := m.st.warn.Render(countOf(len(e.Paths), "file")+" changed on disk since otter changed "+it+":") + "\n" +
		m.st.dim.Render(strings.Join(files, "\n")) + "\n" + "Putting " + it + " back loses those changes."
	yes := false
	c := huh.NewConfirm().Title("Put " + it + " back anyway?").Affirmative("Put back").Negative("Leave as " + they).Value(&yes)
	fm := newPanelForm(m, heading, m.st.dim.Render("enter: Leave as "+they+" (default) · ←/→ choose · y: Put back · esc: Leave"), huh.NewGroup(c))
	leave := func() tea.Cmd {
		return m.noticeCmd(itemInfo, "nothing was undone: the files and the conversation are as they were")
	}
	fm.onSubmit = func() tea.Cmd {
		if !yes {
			return leave()
		}
		return force()
	}
	fm.onEsc = leave
	return fm
}

// showRewound says what an undo or rewind did, and shows the conversation
// as it now stands when it was taken back (the images of what it shows
// numbered anew, as a resumed conversation's are).
func (m *model) showRewound(r app.Rewound, err error) tea.Cmd {
	if err != nil {
		m.notice(itemError, rewindError(err))
		return nil
	}
	var cmd tea.Cmd
	if r.Conversation {
		m.tr.items = nil
		m.follow()
		cmd = m.forgetImages()
		m.replay(r.Entries)
		m.ctxLine = m.contextStatus()
	}
	var b strings.Builder
	msg := "“" + truncateText(r.To.Text, 60) + "”"
	switch {
	case r.Conversation && len(r.Restored)+len(r.Removed) == 0:
		fmt.Fprintf(&b, "The conversation is back to before %s.", msg)
	case r.Conversation:
		fmt.Fprintf(&b, "The conversation and its files are back to before %s.", msg)
	default:
		fmt.Fprintf(&b, "The files are back as they were before %s; the conversation is kept.", msg)
	}
	if len(r.Restored) > 0 {
		b.WriteString(" Put back: " + m.shownPaths(r.Restored) + ".")
	}
	if len(r.Removed) > 0 {
		b.WriteString(" Deleted, as they were new: " + m.shownPaths(r.Removed) + ".")
	}
	if r.Conversation && len(r.Restored)+len(r.Removed) == 0 {
		b.WriteString(" No file was changed by otter's edits since, so none was put back.")
	}
	if r.Commands > 0 {
		fmt.Fprintf(&b, " %s ran since: what they changed is not tracked and stays as it is.", countOf(r.Commands, "command"))
	}
	m.notice(itemInfo, b.String())
	return cmd
}

// rewindError words an undo's or rewind's error, with what to do.
func rewindError(err error) string {
	switch {
	case errors.Is(err, agent.ErrBusy):
		return "this waits until otter has finished: press esc to stop it first"
	case errors.Is(err, app.ErrNothingToUndo):
		return "nothing to undo: the conversation has no message of yours"
	case errors.Is(err, app.ErrNotUndoable):
		return err.Error() + " (undo needs the session database; see [sessions] in the configuration)"
	}
	return err.Error()
}

// shownPath is p relative to the working directory when it is inside it.
func (m *model) shownPath(p string) string {
	if rel, err := filepath.Rel(m.app.WorkDir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	if dir, err := filepath.EvalSymlinks(m.app.WorkDir); err == nil {
		if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

func (m *model) shownPaths(ps []string) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = m.shownPath(p)
	}
	return strings.Join(out, ", ")
}

// rewindPicker is /rewind: the person's messages, newest first, each with
// the files its turn changed and the commands it ran; enter asks what to
// take back to before the chosen one (the conversation, the files or
// both), then does it; esc closes.
type rewindPicker struct {
	listNav
	m    *model
	msgs []app.UserMessage // newest first
	// choose is the question that follows the choice of a message.
	choose *formModal
}

func newRewindPicker(m *model, msgs []app.UserMessage) *rewindPicker {
	p := &rewindPicker{listNav: newListNav("", ""), m: m, msgs: slices.Clone(msgs)}
	slices.Reverse(p.msgs)
	return p
}

func (p *rewindPicker) finished() bool {
	if p.choose != nil {
		return p.choose.done
	}
	return p.done
}

// docked: the picker is a panel under the conversation it goes back in.
func (p *rewindPicker) docked() bool { return true }

func (p *rewindPicker) update(msg tea.Msg) tea.Cmd {
	if p.choose != nil {
		return p.choose.update(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if p.navigate(k.String(), func() int { return len(p.msgs) }) {
		return nil
	}
	if k.String() == "enter" && len(p.msgs) > 0 {
		p.choose = p.question(p.cursor)
		return p.choose.init()
	}
	return nil
}

// question asks what to take back to before message i: the conversation
// and the files (the default), one of them, or nothing.
func (p *rewindPicker) question(i int) *formModal {
	m, to := p.m, p.msgs[i]
	var files []string
	commands := 0
	for _, u := range p.msgs[:i+1] { // the message and those after it
		commands += u.Commands
		for _, f := range u.Files {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	slices.Sort(files)
	heading := m.st.title.Render("Rewind to before “"+truncateText(to.Text, 50)+"”") + "\n"
	if len(files) == 0 {
		heading += m.st.dim.Render("otter's edits changed no file since")
	} else {
		heading += m.st.dim.Render("files otter changed since: " + m.shownPaths(files))
	}
	if commands > 0 {
		heading += "\n" + m.st.warn.Render(countOf(commands, "command")+" ran since: what they changed is not tracked, and stays")
	}
	what := app.RestoreBoth
	cancel := app.Restore(-1)
	sel := huh.NewSelect[app.Restore]().Title("Restore").Options(
		huh.NewOption("Conversation and files", app.RestoreBoth),
		huh.NewOption("Conversation only (the files stay as they are)", app.RestoreConversation),
		huh.NewOption("Files only (the conversation stays)", app.RestoreFiles),
		huh.NewOption("Cancel", cancel),
	).Value(&what)
	fm := newPanelForm(m, heading, m.st.dim.Render("enter: choose · ↑/↓ · esc: cancel"), huh.NewGroup(sel))
	fm.onSubmit = func() tea.Cmd {
		if what == cancel {
			return nil
		}
		seq := to.Seq
		return m.rewound(func(force bool) (app.Rewound, error) { return m.conv.Rewind(m.ctx, seq, what, force) }, true)
	}
	return fm
}

func (p *rewindPicker) view(width, height int) string {
	if p.choose != nil {
		return p.choose.view(width, height)
	}
	st := p.m.st
	rowsRoom := max(height-3, 1)
	start := max(p.cursor-rowsRoom+1, 0)
	end := min(len(p.msgs), start+rowsRoom)
	var b strings.Builder
	b.WriteString(st.title.Render("Rewind to before a message") + st.dim.Render(fmt.Sprintf("  %d, newest first", len(p.msgs))) + "\n")
	now := time.Now()
	for i := start; i < end; i++ {
		u := p.msgs[i]
		var what []string
		if n := len(u.Files); n > 0 {
			what = append(what, countOf(n, "file"))
		}
		if u.Commands > 0 {
			what = append(what, countOf(u.Commands, "command"))
		}
		meta := "  " + app.SessionAge(u.Time, now)
		if len(what) > 0 {
			meta += " · " + strings.Join(what, " · ")
		}
		text := u.Short
		if text == "" {
			text = u.Text
		}
		room := max(width-2-lipgloss.Width(meta)-1, 10)
		line := truncateText(text, room)
		mark := "  "
		if i == p.cursor {
			mark = st.accent.Render("› ")
			line = st.accent.Bold(true).Render(line)
		}
		b.WriteString(mark + line + st.dim.Render(meta) + "\n")
	}
	// Docked: as high as its rows, which the loop kept within height.
	return strings.TrimRight(b.String(), "\n") + "\n\n" + st.dim.Render("↑/↓ select · enter: what to restore · esc close")
}
