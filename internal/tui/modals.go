package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/ask"
)

// modal is a focused component drawn over the transcript: a question from
// the core, a panel (/mcp, /mcp tools), or a form (/call).
type modal interface {
	update(msg tea.Msg) tea.Cmd
	view(width, height int) string
	finished() bool
}

// formModal wraps a huh form with a heading, a footer of keys, and what to
// do when it is submitted or dismissed.
type formModal struct {
	m       *model
	heading string
	// layout, when set, draws the heading for the width it is shown at
	// (wrapping paths and lists itself); it replaces heading.
	layout func(width int) string
	// cutNote follows the "… +N lines" of a docked heading too long for
	// the panel: how to see the rest.
	// keysAt, when set, is the footer's line of keys at a width (which
	// keys apply may depend on it); it replaces footer.
	keysAt   func(width int) string
	cutNote  string
	footer   string
	form     *huh.Form
	onSubmit func() tea.Cmd
	onEsc    func() tea.Cmd
	keys     map[string]func() tea.Cmd // extra keys (e.g. ctrl+d: decline)
	done     bool
	// dock draws the form as a panel at the bottom, as high as it needs,
	// with the transcript visible above it (a question about the chat).
	dock bool

	// huh moves between fields with a command (NextField, then, off a
	// group's last field, a move to the next group), so keys that arrive
	// in the same burst as the Enter would reach the field being left.
	// While a move is on its way, keys wait here; it ends when huh's move
	// message has been handled (see [formModal.moveEnded]).
	moving bool
	from   huh.Field // the field focused when the move began
	move   int       // counts moves, so a late timeout ends only its own
	held   []tea.Msg
}

// formMoveTimeout bounds how long keys wait for huh's move to the next
// field should it never come. The one Enter known to move nowhere — on a
// choice list whose filter matches nothing, which huh takes with no error
// — starts no wait (nothingChosen); every other wait ends on huh's own
// message, however slow the machine. So this is only a safeguard against a
// huh that changed, and long: under load and the race detector huh's move
// took more than the 1 s this once was, and the keys typed behind the
// Enter went to the field being left.
const formMoveTimeout = 10 * time.Second

// nothingChosen reports whether field is a choice list with no option
// under the cursor (its filter matches none): huh's Select of any type,
// whose Hovered says so.
func nothingChosen(field huh.Field) bool {
	m := reflect.ValueOf(field).MethodByName("Hovered")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 2 || m.Type().Out(1).Kind() != reflect.Bool {
		return false
	}
	return !m.Call(nil)[1].Bool()
}

// formMoveDone ends the wait of a formModal's held keys.
type formMoveDone struct {
	f    *formModal
	move int
}

func newFormModal(m *model, heading, footer string, groups ...*huh.Group) *formModal {
	return buildFormModal(m, heading, footer, false, groups)
}

// newPanelForm is a formModal drawn as a panel at the bottom, as high as
// its fields, with the chat in view above it.
func newPanelForm(m *model, heading, footer string, groups ...*huh.Group) *formModal {
	return buildFormModal(m, heading, footer, true, groups)
}

func buildFormModal(m *model, heading, footer string, dock bool, groups []*huh.Group) *formModal {
	km := huh.NewDefaultKeyMap()
	km.Quit.SetKeys("esc")
	f := huh.NewForm(groups...).
		WithTheme(m.st.huhTheme()).
		WithKeyMap(km).
		WithShowHelp(false)
	fm := &formModal{m: m, heading: heading, footer: footer, form: f, dock: dock}
	fm.resize()
	return fm
}

// resize fits the form into the modal box under its heading, so that a
// long form scrolls inside the box instead of being cut.
func (f *formModal) resize() {
	w := max(f.m.width-4, 30)
	if f.dock { // as high as its fields: view trims what is left below them
		f.form.WithWidth(w).WithHeight(max(f.m.mainHeight(), 4))
		return
	}
	h := f.m.mainHeight() - 2 - lipgloss.Height(f.footerAt(w)) - 1
	if heading := f.headingAt(w); heading != "" {
		h -= lipgloss.Height(heading) + 1
	}
	f.form.WithWidth(w).WithHeight(max(h, 4))
}

func (f *formModal) init() tea.Cmd { return f.form.Init() }

func (f *formModal) update(msg tea.Msg) tea.Cmd {
	if f.done {
		return nil
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg:
		if f.moving {
			f.held = append(f.held, msg)
			return nil
		}
	case formMoveDone:
		if msg.f != f || msg.move != f.move || !f.moving {
			return nil
		}
		return f.release()
	}
	cmd := f.step(msg)
	if f.moving && f.moveEnded(msg) {
		return tea.Batch(cmd, f.release())
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && !f.moving && !f.done && len(f.form.Errors()) == 0 {
		switch k.String() {
		case "enter", "tab", "shift+tab":
			if nothingChosen(f.form.GetFocusedField()) {
				return cmd // huh moves nowhere
			}
			f.moving, f.from = true, f.form.GetFocusedField()
			f.move++
			done := formMoveDone{f, f.move}
			return tea.Batch(cmd, tea.Tick(formMoveTimeout, func(time.Time) tea.Msg { return done }))
		}
	}
	return cmd
}

// moveEnded reports whether msg, just handled by the form, finished the
// move under way: the form is done, a group move was handled (it is the
// last step of any move, even one that found nowhere to go), or a field
// move put the focus on another field. A field move off a group's last
// field only asks for the group move, which is still to come.
func (f *formModal) moveEnded(msg tea.Msg) bool {
	if f.done || f.form.State != huh.StateNormal {
		return true
	}
	switch fmt.Sprintf("%T", msg) {
	case "huh.nextGroupMsg", "huh.prevGroupMsg":
		return true
	}
	if msg == huh.NextField() || msg == huh.PrevField() {
		return f.form.GetFocusedField() != f.from
	}
	return false
}

// release hands the held keys to the form, in order, until one of them
// starts another move.
func (f *formModal) release() tea.Cmd {
	f.moving = false
	var cmds []tea.Cmd
	for len(f.held) > 0 && !f.moving && !f.done {
		msg := f.held[0]
		f.held = f.held[1:]
		cmds = append(cmds, f.update(msg))
	}
	return tea.Batch(cmds...)
}

// step passes one message to the form.
func (f *formModal) step(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if fn := f.keys[k.String()]; fn != nil {
			f.done = true
			return fn()
		}
	}
	if _, ok := msg.(tea.WindowSizeMsg); ok {
		f.resize() // and the form lays its fields out again at that width
	}
	fm, cmd := f.form.Update(msg)
	if ff, ok := fm.(*huh.Form); ok {
		f.form = ff
	}
	switch f.form.State {
	case huh.StateCompleted:
		f.done = true
		if f.onSubmit != nil {
			return tea.Batch(cmd, f.onSubmit())
		}
	case huh.StateAborted:
		f.done = true
		if f.onEsc != nil {
			return tea.Batch(cmd, f.onEsc())
		}
	}
	return cmd
}

func (f *formModal) view(width, height int) string {
	fv := f.form.View()
	footer := f.footerAt(width)
	var heading []string
	if h := f.headingAt(width); h != "" {
		heading = strings.Split(h, "\n")
	}
	if f.dock {
		// As high as its fields (no padding below them); when the panel
		// is short, the heading gives way, so the choices and keys stay.
		lines := strings.Split(fv, "\n")
		for len(lines) > 1 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
			lines = lines[:len(lines)-1]
		}
		fv = strings.Join(lines, "\n")
		room := height - len(lines) - 1 - lipgloss.Height(footer)
		if footer == "" {
			room++
		}
		if n := len(heading); n > room && room >= 2 {
			heading = append(heading[:room-1], f.m.st.dim.Render(fmt.Sprintf("… +%d lines", n-room+1)+f.cutNote))
		}
	}
	var b strings.Builder
	if len(heading) > 0 {
		b.WriteString(strings.Join(heading, "\n"))
		b.WriteString("\n\n")
	}
	b.WriteString(fv)
	if footer != "" {
		b.WriteString("\n" + footer)
	}
	return b.String()
}

// footerAt is the footer drawn at width: a line of keys (all dim) too
// long for it wraps between its keys.
func (f *formModal) footerAt(width int) string {
	if f.keysAt != nil {
		return f.m.st.dim.Render(wrapKeys(f.keysAt(width), width))
	}
	if ansi.StringWidth(f.footer) <= width || strings.Contains(f.footer, "\n") {
		return f.footer
	}
	return f.m.st.dim.Render(wrapKeys(ansi.Strip(f.footer), width))
}

// headingAt is the heading drawn at width.
func (f *formModal) headingAt(width int) string {
	if f.layout != nil {
		return f.layout(width)
	}
	if f.heading == "" {
		return ""
	}
	return lipgloss.NewStyle().Width(width).Render(f.heading)
}

func (f *formModal) finished() bool { return f.done }

func (f *formModal) docked() bool { return f.dock }

// --- questions from the core ---

func newElicitModal(m *model, req ask.Elicitation, reply func(ask.ElicitReply)) modal {
	heading := m.st.title.Render(fmt.Sprintf("%s asks for input", req.Server)) + "\n" + req.Message
	sf, err := buildSchemaForm(req.Schema)
	if err != nil || len(sf.fields) == 0 {
		// Nothing to fill in (or a schema we cannot read): a plain
		// accept/decline question.
		choice := "accept"
		if err != nil {
			heading += "\n" + m.st.errText.Render(err.Error())
			choice = "decline"
		}
		sel := huh.NewSelect[string]().Title("Respond").Options(
			huh.NewOption("Accept", "accept"), huh.NewOption("Decline", "decline"), huh.NewOption("Cancel", "cancel")).Value(&choice)
		fm := newFormModal(m, heading, m.st.dim.Render("esc cancel"), huh.NewGroup(sel))
		fm.onSubmit = func() tea.Cmd {
			r := ask.ElicitReply{Action: ask.ElicitAction(choice)}
			if r.Action == ask.Accept {
				r.Content = map[string]any{}
			}
			reply(r)
			return nil
		}
		fm.onEsc = func() tea.Cmd { reply(ask.ElicitReply{Action: ask.Cancel}); return nil }
		return fm
	}
	// The form ends with the three answers MCP knows; ctrl+d and esc are
	// the shortcuts for the last two.
	respond := "accept"
	fields := append(sf.fields, huh.NewSelect[string]().Title("Respond").Options(
		huh.NewOption("Accept", "accept"), huh.NewOption("Decline", "decline"), huh.NewOption("Cancel", "cancel")).Value(&respond))
	fm := newFormModal(m, heading,
		m.st.dim.Render("enter next · shift+tab back · ctrl+d decline · esc cancel"),
		huh.NewGroup(fields...))
	fm.onSubmit = func() tea.Cmd {
		switch respond {
		case "decline":
			reply(ask.ElicitReply{Action: ask.Decline})
			return m.callNoticeCmd(req.Server, itemInfo, fmt.Sprintf("declined %s's request for input", req.Server))
		case "cancel":
			reply(ask.ElicitReply{Action: ask.Cancel})
			return m.callNoticeCmd(req.Server, itemInfo, fmt.Sprintf("canceled %s's request for input", req.Server))
		}
		content, err := sf.collect()
		if err != nil {
			reply(ask.ElicitReply{Action: ask.Cancel})
			return m.callNoticeCmd(req.Server, itemError, "elicitation: "+err.Error())
		}
		reply(ask.ElicitReply{Action: ask.Accept, Content: content})
		return m.callNoticeCmd(req.Server, itemInfo, fmt.Sprintf("sent the requested input to %s", req.Server))
	}
	fm.onEsc = func() tea.Cmd {
		reply(ask.ElicitReply{Action: ask.Cancel})
		return m.callNoticeCmd(req.Server, itemInfo, fmt.Sprintf("canceled %s's request for input", req.Server))
	}
	fm.keys = map[string]func() tea.Cmd{
		"ctrl+d": func() tea.Cmd {
			reply(ask.ElicitReply{Action: ask.Decline})
			return m.callNoticeCmd(req.Server, itemInfo, fmt.Sprintf("declined %s's request for input", req.Server))
		},
	}
	return fm
}

func newURLElicitModal(m *model, req ask.Elicitation, open func(string) error, reply func(ask.ElicitReply)) modal {
	heading := m.st.title.Render(fmt.Sprintf("%s asks you to open a URL", req.Server)) + "\n" + req.Message +
		"\n\n" + m.st.accent.Render(req.URL)
	if u, err := url.Parse(req.URL); err == nil {
		heading += "\n" + m.st.dim.Render("host: "+u.Host)
	}
	choice := "copy"
	var opts []huh.Option[string]
	if open != nil {
		choice = "open"
		opts = append(opts, huh.NewOption("Open in browser", "open"))
	}
	opts = append(opts, huh.NewOption("Copy URL (open it elsewhere)", "copy"),
		huh.NewOption("Decline", "decline"), huh.NewOption("Cancel", "cancel"))
	sel := huh.NewSelect[string]().Title("Respond").Options(opts...).Value(&choice)
	fm := newFormModal(m, heading, m.st.dim.Render("esc cancel"), huh.NewGroup(sel))
	sm := &stagedModal{cur: fm}
	canceled := func() tea.Cmd {
		reply(ask.ElicitReply{Action: ask.Cancel})
		return m.callNoticeCmd(req.Server, itemInfo, fmt.Sprintf("canceled %s's request to open a URL", req.Server))
	}
	refuse := func(choice string) tea.Cmd { // "decline" or "cancel"
		if choice == "decline" {
			reply(ask.ElicitReply{Action: ask.Decline})
			return nil
		}
		return canceled()
	}
	// Without a browser, the answer waits until the person says they are
	// done at the URL: "accept" before that would tell the server too soon.
	confirm := func(why string) *formModal {
		finished := "done"
		c := huh.NewSelect[string]().Title("Open the URL, then come back").Options(
			huh.NewOption("I have finished there", "done"), huh.NewOption("Decline", "decline"),
			huh.NewOption("Cancel", "cancel")).Value(&finished)
		next := newFormModal(m, heading+"\n\n"+why, m.st.dim.Render("esc cancel"), huh.NewGroup(c))
		next.onSubmit = func() tea.Cmd {
			switch finished {
			case "done":
				reply(ask.ElicitReply{Action: ask.Accept})
				return m.callNoticeCmd(req.Server, itemInfo, fmt.Sprintf("told %s you finished at %s", req.Server, req.URL))
			}
			return refuse(finished)
		}
		next.onEsc = canceled
		return next
	}
	fm.onSubmit = func() tea.Cmd {
		switch choice {
		case "open":
			if err := open(req.URL); err != nil {
				sm.next = confirm(m.st.errText.Render(fmt.Sprintf("could not open the browser (%v)", err)))
				return tea.SetClipboard(req.URL)
			}
			reply(ask.ElicitReply{Action: ask.Accept})
			return m.noticeCmd(itemInfo, "opened "+req.URL)
		case "copy":
			sm.next = confirm(m.st.dim.Render("copied to the clipboard"))
			return tea.SetClipboard(req.URL)
		}
		return refuse(choice)
	}
	fm.onEsc = canceled
	return sm
}

// stagedModal is a question asked in steps: a form whose answer may set
// the next form to show.
type stagedModal struct {
	cur  *formModal
	next *formModal
}

func (s *stagedModal) init() tea.Cmd { return s.cur.init() }

func (s *stagedModal) update(msg tea.Msg) tea.Cmd {
	cmd := s.cur.update(msg)
	if s.cur.done && s.next != nil {
		s.cur, s.next = s.next, nil
		return tea.Batch(cmd, s.cur.init())
	}
	return cmd
}

func (s *stagedModal) view(width, height int) string { return s.cur.view(width, height) }

func (s *stagedModal) finished() bool { return s.cur.done && s.next == nil }

func newLoginModal(m *model, req ask.Login, reply func(ask.LoginReply)) modal {
	heading := m.st.warn.Render(fmt.Sprintf("server %s needs authorization", req.Server)) + "\n" +
		m.st.dim.Render(req.AuthURL)
	choice := ask.LoginOpenBrowser
	opts := []huh.Option[ask.LoginChoice]{
		huh.NewOption("Open browser", ask.LoginOpenBrowser),
		huh.NewOption("Copy URL", ask.LoginShowURL),
	}
	if req.CanPasteRedirect {
		opts = append(opts, huh.NewOption("Paste redirect URL", ask.LoginPasteRedirect))
	}
	opts = append(opts, huh.NewOption("Later", ask.LoginLater))
	var redirect string
	sel := huh.NewSelect[ask.LoginChoice]().Title("Authorize now?").Options(opts...).Value(&choice)
	paste := huh.NewInput().Title("Paste the URL your browser was redirected to").Value(&redirect).
		Validate(func(s string) error {
			if u, err := url.Parse(strings.TrimSpace(s)); err != nil || u.Scheme == "" || u.Query().Get("code") == "" && u.Query().Get("error") == "" {
				return fmt.Errorf("paste the whole redirect URL (it contains ?code=…)")
			}
			return nil
		})
	fm := newFormModal(m, heading, m.st.dim.Render("esc later"),
		huh.NewGroup(sel),
		huh.NewGroup(paste).WithHideFunc(func() bool { return choice != ask.LoginPasteRedirect }))
	fm.onSubmit = func() tea.Cmd {
		reply(ask.LoginReply{Choice: choice, RedirectURL: strings.TrimSpace(redirect)})
		switch choice {
		case ask.LoginOpenBrowser:
			return m.noticeCmd(itemInfo, fmt.Sprintf("waiting for %s's authorization in your browser…", req.Server))
		case ask.LoginShowURL:
			return tea.Batch(tea.SetClipboard(req.AuthURL),
				m.noticeCmd(itemInfo, fmt.Sprintf("copied; open this URL to authorize %s, otter waits for the callback:\n%s", req.Server, req.AuthURL)))
		case ask.LoginPasteRedirect:
			return m.noticeCmd(itemInfo, fmt.Sprintf("finishing %s's authorization…", req.Server))
		}
		return m.noticeCmd(itemInfo, fmt.Sprintf("%s stays needs-auth; log in later from /mcp (l)", req.Server))
	}
	fm.onEsc = func() tea.Cmd {
		reply(ask.LoginReply{Choice: ask.LoginLater})
		return m.noticeCmd(itemInfo, fmt.Sprintf("%s stays needs-auth; log in later from /mcp (l)", req.Server))
	}
	return fm
}

func newPermissionModal(m *model, req ask.Permission, reply func(ask.PermissionDecision)) modal {
	title := m.st.title.Render("Allow " + req.Tool + "?")
	if req.Unconfined {
		title = m.st.title.Render("Run this command outside the sandbox?")
	}
	var hints []string
	if req.ReadOnly {
		hints = append(hints, "read-only")
	}
	if req.Destructive {
		hints = append(hints, m.st.warn.Render("may modify or delete data"))
	}
	if req.Reason != "" && req.Reason != "it is not read-only" { // "read-only"/"may modify" say that already
		hints = append(hints, req.Reason)
	}
	if len(hints) > 0 {
		title += "  " + m.st.dim.Render(strings.Join(hints, " · "))
	}
	always := "Always allow"
	if req.SaveTo != "" {
		always += " (saved to " + req.SaveTo + ")"
	}
	choice := ask.AllowOnce
	options := []huh.Option[ask.PermissionDecision]{huh.NewOption("Allow once", ask.AllowOnce)}
	if !req.OnceOnly {
		// A call nothing but itself can be allowed (a command otter could
		// not split, one to run outside the sandbox) is allowed once or
		// not at all.
		options = append(options, huh.NewOption(sessionChoice(req), ask.AllowSession), // diff.go
			huh.NewOption(always, ask.AllowAlways))
	}
	options = append(options, huh.NewOption("Deny", ask.Deny))
	sel := huh.NewSelect[ask.PermissionDecision]().Title("Permission").Options(options...).Value(&choice)
	keys := "enter: Allow once (default) · ↑/↓ choose · esc: Deny"
	args := prettyJSON(req.Arguments, 8)
	all := prettyJSON(req.Arguments, math.MaxInt)
	fm := newPanelForm(m, "", m.st.dim.Render(keys), huh.NewGroup(sel))
	pm := &permissionModal{formModal: fm, tool: req.Tool, title: title, args: strings.Split(all, "\n")}
	// The first lines of the arguments, long values wrapped under their
	// key; ctrl+o shows them all. The panel says so when it shows less
	// than all: more lines, or a value that wraps (one long string, such
	// as a file's content, is one line of JSON).
	fm.layout = func(width int) string {
		h := lipgloss.NewStyle().Width(width).Render(title)
		if args != "" {
			h += "\n" + m.st.dim.Render(wrapIndented(args, width))
		}
		return h
	}
	fm.cutNote = " · ctrl+o shows all"
	fm.keysAt = func(width int) string {
		if all != "" && (args != all || strings.Count(wrapIndented(all, width), "\n") > strings.Count(all, "\n")) {
			return keys + " · ctrl+o all arguments"
		}
		return keys
	}
	deny := func() tea.Cmd {
		reply(ask.Deny) // the call's line says "✗ denied" and why
		return nil
	}
	fm.onSubmit = func() tea.Cmd {
		switch choice {
		case ask.Deny:
			return deny()
		case ask.AllowAlways:
			reply(choice)
			if req.SaveTo != "" {
				return m.noticeCmd(itemInfo, fmt.Sprintf("always allowing %s: the rule is saved to %s", req.Tool, req.SaveTo))
			}
		}
		reply(choice)
		return nil
	}
	fm.onEsc = deny
	if req.Diff != "" {
		pm.showDiff(req.Diff)
	}
	return pm
}

// permissionModal is the permission question with a view of all the
// arguments (ctrl+o), which takes the whole screen and scrolls.
type permissionModal struct {
	*formModal
	tool   string // the qualified name of the tool it asks about
	title  string
	args   []string
	all    bool // showing all arguments
	scroll int
	diff   string // the change the call makes to a file, shown in place of the arguments
}

func (p *permissionModal) docked() bool { return !p.all }

// showDiff has the panel show the change a call would make to a file (the
// first diffHeadLines lines of its diff, in colour) in place of the
// arguments, which say the same less readably; ctrl+o shows all of it.
func (p *permissionModal) showDiff(diff string) {
	m, fm := p.m, p.formModal
	p.diff = diff
	p.args = []string{diff} // ctrl+o opens the view of all of it
	fm.layout = func(width int) string {
		lines := m.st.diffLines(diff, width, false)
		if len(lines) > diffHeadLines {
			lines = append(lines[:diffHeadLines-1], m.st.dim.Render("… +"+countOf(len(lines)-diffHeadLines+1, "line")))
		}
		return lipgloss.NewStyle().Width(width).Render(p.title) + "\n" + strings.Join(lines, "\n")
	}
	keys := "enter: Allow once (default) · ↑/↓ choose · esc: Deny · ctrl+o the whole diff"
	fm.keysAt = func(int) string { return keys }
}

func (p *permissionModal) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p.formModal.update(msg)
	}
	if !p.all {
		if k.String() == "ctrl+o" && len(p.args) > 0 && p.args[0] != "" {
			p.all, p.scroll = true, 0
			return nil
		}
		return p.formModal.update(msg)
	}
	switch k.String() {
	case "up", "k":
		p.scroll--
	case "down", "j":
		p.scroll++
	case "pgup":
		p.scroll -= 10
	case "pgdown", "space":
		p.scroll += 10
	case "ctrl+o", "esc", "q", "enter":
		p.all = false
	}
	return nil
}

func (p *permissionModal) view(width, height int) string {
	if !p.all {
		return p.formModal.view(width, height)
	}
	// Long values wrap under their key: nothing is cut.
	st := p.m.st
	var lines []string
	if p.diff != "" {
		lines = st.diffLines(p.diff, width, true)
	} else {
		for _, l := range strings.Split(wrapIndented(strings.Join(p.args, "\n"), width), "\n") {
			lines = append(lines, st.dim.Render(l))
		}
	}
	keys := wrapKeys("↑/↓ pgup/pgdown scroll · ctrl+o or esc back to the question", width)
	room := max(height-3-lipgloss.Height(keys), 1)
	p.scroll = min(max(p.scroll, 0), max(len(lines)-room, 0))
	shown := lines[p.scroll:min(len(lines), p.scroll+room)]
	where := fmt.Sprintf("lines %d–%d of %d", p.scroll+1, p.scroll+len(shown), len(lines))
	return p.title + "  " + st.dim.Render(where) + "\n\n" + strings.Join(shown, "\n") +
		"\n\n" + st.dim.Render(keys)
}

// newSamplingModal asks whether a server may use the model. Like the
// permission prompt, Enter allows and Esc denies, and the prompt says so.
func newSamplingModal(m *model, req ask.Sampling, reply func(bool)) modal {
	heading := m.st.title.Render(fmt.Sprintf("%s wants to use your model", req.Server))
	var b strings.Builder
	if req.SystemPrompt != "" {
		b.WriteString("system: " + firstLines(req.SystemPrompt, 3) + "\n")
	}
	for _, msg := range req.Messages {
		b.WriteString("› " + firstLines(msg, 4) + "\n")
	}
	fmt.Fprintf(&b, "max tokens: %d", req.MaxTokens)
	heading += "\n" + m.st.dim.Render(b.String())
	ok := true
	c := huh.NewConfirm().Title("Allow this sampling request?").Affirmative("Allow").Negative("Deny").Value(&ok)
	fm := newPanelForm(m, heading, m.st.dim.Render("enter: Allow (default) · ←/→ choose · esc: Deny"), huh.NewGroup(c))
	fm.onSubmit = func() tea.Cmd { reply(ok); return nil }
	fm.onEsc = func() tea.Cmd { reply(false); return nil }
	return fm
}

// newTrustModal asks whether to trust a project that defines servers, or
// what changed in a trusted project's configuration since. asked: the
// person typed /trust, so Trust is the choice Enter takes; the prompt otter
// opens by itself at the start keeps "Not now". Both say which keys do what.
func newTrustModal(m *model, req *TrustRequest, asked bool) modal {
	head, title, off := "This project is not trusted yet: "+req.Dir, "Trust this directory?", "until trusted, none of it runs or reaches the model"
	switch {
	case req.Legacy:
		head = "This project was trusted by an earlier otter, which kept no record of what it ran: " + req.Dir
		title, off = "Trust what it runs now?", "until trusted again, none of it runs"
	case req.Changed:
		head = "This project's configuration changed since you trusted it: " + req.Dir
		title, off = "Trust these changes?", "until trusted again, what changed does not run"
	}
	// Each server's command and each setting is an item of its own;
	// laid out at the box's width so a path breaks only after a "/".
	layout := func(width int) string {
		var b strings.Builder
		for _, l := range wrapWords(head, width) {
			b.WriteString(m.st.warn.Render(l) + "\n")
		}
		b.WriteString("Trusting it lets otter")
		lead := " "
		if len(req.Servers) > 0 {
			b.WriteString(lead + "run its MCP servers:")
			lead = "\nand "
		}
		for _, s := range req.Servers {
			for _, l := range wrapItem(s, 2, 2, width) {
				b.WriteString("\n" + m.st.dim.Render(l))
			}
		}
		if len(req.Settings) > 0 {
			b.WriteString(lead + "apply its settings, commands, skills and hooks:")
			lead = "\nand "
			for _, s := range req.Settings {
				for _, l := range wrapItem(s, 2, 2, width) {
					b.WriteString("\n" + m.st.dim.Render(l))
				}
			}
		}
		if len(req.Instructions) > 0 {
			b.WriteString(lead + "send the model its instruction files:")
			for _, f := range req.Instructions {
				for _, l := range wrapItem(f, 2, 2, width) {
					b.WriteString("\n" + m.st.dim.Render(l))
				}
			}
		}
		b.WriteString("\n\n" + m.st.dim.Render(off))
		return strings.TrimPrefix(b.String(), "\n")
	}
	yes := asked
	c := huh.NewConfirm().Title(title).Affirmative("Trust").Negative("Not now").Value(&yes)
	fm := newFormModal(m, "", "", huh.NewGroup(c))
	fm.layout = layout
	fm.keysAt = func(int) string {
		choice := "Not now"
		if yes {
			choice = "Trust"
		}
		return "enter: " + choice + " · ←/→ choose · y: Trust · n or esc: Not now"
	}
	fm.resize()
	conv, ctx := m.conv, m.ctx
	notTrusted := func() tea.Cmd {
		if req.Changed {
			return m.noticeCmd(itemInfo, fmt.Sprintf("what changed in %s stays off; the rest runs as you trusted it (review it later with /trust, or `otter trust` in that directory)", req.Dir))
		}
		return m.noticeCmd(itemInfo, fmt.Sprintf("%s is not trusted: its servers, commands, skills and hooks stay off and its instruction files unread (trust it later with /trust, or `otter trust` in that directory)", req.Dir))
	}
	fm.onEsc = notTrusted
	fm.onSubmit = func() tea.Cmd {
		if !yes {
			return notTrusted()
		}
		return tea.Sequence(m.noticeCmd(itemInfo, fmt.Sprintf("trusted %s; starting its servers", req.Dir)), func() tea.Msg {
			// SessionStart hooks trusting enabled run as the conversation's
			// start would have run them (app.Conversation.Trust).
			diff, err := conv.Trust(ctx, req.report)
			return reloadedMsg{diff: diff, err: err}
		})
	}
	return fm
}

// prettyJSON indents JSON, keeping its key order, and cuts it to maxLines.
func prettyJSON(raw json.RawMessage, maxLines int) string {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "{}" || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return firstLines(string(raw), maxLines)
	}
	return firstLines(b.String(), maxLines)
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + "\n… +" + countOf(len(lines)-n, "line")
}
