package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/termtext"
	"github.com/otter-sh/otter/internal/tool"
)

// actionDoneMsg reports the end of a server action started from /mcp.
type actionDoneMsg struct {
	what string
	err  error
}

// mcpPanel is the /mcp view: every server with its state and figures, the
// selected one's error and stderr, and actions on it.
type mcpPanel struct {
	m      *model
	cursor int
	status string
	done   bool
	// diff is the selected server's held-back changes, shown after d.
	diff string
}

func newMCPPanel(m *model) *mcpPanel { return &mcpPanel{m: m} }

func (p *mcpPanel) finished() bool { return p.done }

func (p *mcpPanel) selected() (app.ServerStatus, bool) {
	s := p.m.servers
	if len(s) == 0 {
		return app.ServerStatus{}, false
	}
	p.cursor = min(max(p.cursor, 0), len(s)-1)
	return s[p.cursor], true
}

func (p *mcpPanel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case actionDoneMsg:
		p.m.refresh()
		if msg.err != nil {
			p.status = p.m.st.errText.Render(msg.what + ": " + msg.err.Error())
		} else {
			p.status = p.m.st.ok.Render(msg.what + ": done")
		}
	case tea.KeyPressMsg:
		srv, ok := p.selected()
		a, ctx := p.m.app, p.m.ctx
		action := func(what string, fn func() error) tea.Cmd {
			p.status = p.m.st.dim.Render(what + "…")
			return func() tea.Msg { return actionDoneMsg{what: what, err: fn()} }
		}
		switch msg.String() {
		case "esc", "q":
			p.done = true
		case "up", "k":
			p.cursor--
			p.diff = ""
		case "down", "j":
			p.cursor++
			p.diff = ""
		case "enter", "s":
			// Opening an idle server starts it (it was waiting to be needed).
			if ok && srv.State == app.StateIdle {
				return action("start "+srv.Name, func() error { return a.WakeServer(ctx, srv.Name) })
			}
		case "r":
			if ok {
				return action("reconnect "+srv.Name, func() error { return a.Reconnect(ctx, srv.Name) })
			}
		case "e":
			if ok {
				on := srv.State == app.StateDisabled
				verb := "disable "
				if on {
					verb = "enable "
				}
				return action(verb+srv.Name, func() error { return a.SetEnabled(ctx, srv.Name, on) })
			}
		case "l":
			if ok {
				return action("login "+srv.Name, func() error { return a.Login(ctx, srv.Name) })
			}
		case "d":
			if ok && heldBackLine(srv) != "" {
				changes, err := a.ToolChanges(srv.Name)
				p.diff = diffText(changes, err)
			}
		case "a":
			if ok && heldBackLine(srv) != "" {
				p.diff = ""
				return action("approve the changed tools of "+srv.Name, func() error {
					_, err := a.ApproveTools(ctx, srv.Name, nil) // every held-back tool, and its instructions
					return err
				})
			}
		case "+":
			rp, cmd := newRegistryPanel(p.m, "") // registry.go
			return tea.Batch(cmd, func() tea.Msg { return openPanelMsg{rp} })
		case "t":
			if ok {
				tp := newToolsPanel(p.m, srv.Name)
				tp.back = p
				return func() tea.Msg { return openPanelMsg{tp} }
			}
		}
	}
	return nil
}

func (p *mcpPanel) view(width, height int) string {
	m := p.m
	st := m.st
	servers := m.servers
	connected, idle := 0, 0
	for _, s := range servers {
		switch s.State {
		case app.StateConnected:
			connected++
		case app.StateIdle:
			idle++
		}
	}
	counts := fmt.Sprintf("  %d/%d connected", connected, len(servers))
	if idle > 0 {
		counts += fmt.Sprintf(" · %d idle", idle)
	}
	var b strings.Builder
	b.WriteString(st.title.Render("MCP servers") + st.dim.Render(fmt.Sprintf("%s · %d tools", counts, len(m.tools))) + "\n")
	if len(servers) == 0 {
		b.WriteString("\nNo MCP servers are configured. Add one to " + m.app.Paths.ShortUserConfigFile() + ":\n\n" +
			st.dim.Render("  [[mcp.servers]]\n  name = \"everything\"\n  command = \"npx\"\n  args = [\"-y\", \"@modelcontextprotocol/server-everything\"]") +
			"\n\nor import them: otter mcp import\n")
		b.WriteString("\n" + st.dim.Render("+ add one from the MCP Registry · esc close"))
		return b.String()
	}
	sel, _ := p.selected()
	// The columns, and the order in which they give way when the panel is
	// too narrow for all of them (0: never): whole columns go, not the
	// ends of rows; the selected server's line below then has their values.
	cols := []struct {
		head string
		drop int
		cell func(s app.ServerStatus) string
	}{
		{"NAME", 0, func(s app.ServerStatus) string { return s.Name }},
		{"TRANSPORT", 5, func(s app.ServerStatus) string { return s.Transport }},
		{"STATE", 0, func(s app.ServerStatus) string { return string(s.State) }},
		{"TOOLS", 0, m.toolCount},
		{"RESOURCES", 2, func(s app.ServerStatus) string { return fmt.Sprint(s.Resources + s.Templates) }},
		{"PROMPTS", 1, func(s app.ServerStatus) string { return fmt.Sprint(s.Prompts) }},
		{"CALLS", 4, func(s app.ServerStatus) string { return fmt.Sprint(s.Calls) }},
		{"ERRORS", 6, func(s app.ServerStatus) string { return fmt.Sprint(s.Errors) }},
		{"P50", 3, func(s app.ServerStatus) string {
			if s.MedianLatency > 0 {
				return fmtDuration(s.MedianLatency)
			}
			return "-"
		}},
	}
	dropped := 0
	var t *table.Table
	var tableStr string
	for {
		var heads []string
		var keep []int
		for i, c := range cols {
			if c.drop == 0 || c.drop > dropped {
				heads = append(heads, c.head)
				keep = append(keep, i)
			}
		}
		rows := make([][]string, 0, len(servers))
		for _, s := range servers {
			row := make([]string, 0, len(keep))
			for _, i := range keep {
				row = append(row, cols[i].cell(s))
			}
			rows = append(rows, row)
		}
		stateCol := slices.Index(heads, "STATE")
		t = table.New().
			Headers(heads...).
			Rows(rows...).
			Border(lipgloss.NormalBorder()).BorderStyle(st.border).
			BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).BorderColumn(false).
			StyleFunc(func(row, col int) lipgloss.Style {
				s := lipgloss.NewStyle().PaddingRight(2)
				if row == table.HeaderRow {
					return s.Inherit(st.dim).Bold(true)
				}
				if col == stateCol && row < len(servers) {
					s = s.Inherit(st.stateColor[servers[row].State])
				}
				if row == p.cursor {
					s = s.Bold(true)
					if col == 0 {
						s = s.Inherit(st.accent)
					}
				}
				return s
			})
		tableStr = t.Render()
		if lipgloss.Width(tableStr)+2 <= width || dropped >= 6 {
			break
		}
		dropped++
	}
	// Mark the selected row.
	lines := strings.Split(tableStr, "\n")
	for i := range lines {
		mark := "  "
		if i == p.cursor+2 {
			mark = st.accent.Render("› ")
		}
		lines[i] = mark + lines[i]
	}
	b.WriteString(strings.Join(lines, "\n") + "\n\n")

	// Details of the selected server.
	wrap := lipgloss.NewStyle().Width(max(width-2, 20))
	head := st.accent.Render(sel.Name) + " " + st.state(sel.State)
	if sel.ServerInfo != "" {
		head += st.dim.Render(" · " + sel.ServerInfo)
	}
	if sel.Scope != "" {
		head += st.dim.Render(" · " + sel.Scope + " scope")
	}
	// Uptime in whole seconds: the panel is not redrawn every second, so
	// "up 0ms" would stay on screen after a reconnect.
	if up := time.Since(sel.ConnectedAt); !sel.ConnectedAt.IsZero() && sel.State == app.StateConnected && up >= time.Second {
		head += st.dim.Render(" · up " + fmtDuration(up.Truncate(time.Second)))
	}
	b.WriteString(wrap.Render(head) + "\n")
	if dropped > 0 { // what the table has no room for
		var more []string
		for _, c := range cols {
			if c.drop > 0 && c.drop <= dropped {
				more = append(more, strings.ToLower(c.head)+" "+c.cell(sel))
			}
		}
		b.WriteString(st.dim.Render(wrap.Render(strings.Join(more, " · "))) + "\n")
	}
	switch {
	case sel.State == app.StateIdle:
		b.WriteString(st.dim.Render(wrap.Render(idleLine(sel))) + "\n")
	case sel.Error == "":
	case sel.State == app.StateDisabled: // its state and why, not a failure
		b.WriteString(st.dim.Render(wrap.Render(sel.Error)) + "\n")
	default:
		b.WriteString(st.errText.Render(wrap.Render("last error: "+sel.Error)) + "\n")
	}
	if !sel.TokenExpiry.IsZero() {
		b.WriteString(st.dim.Render("token expires "+sel.TokenExpiry.Format(time.DateTime)) + "\n")
	}
	b.WriteString(st.dim.Render(wrap.Render(rootsLine(sel))) + "\n")
	if l := sandboxLine(sel); l != "" {
		b.WriteString(st.dim.Render(wrap.Render(l)) + "\n")
	}
	if l := heldBackLine(sel); l != "" {
		b.WriteString(st.errText.Render(wrap.Render(l)) + "\n")
	}
	if p.diff != "" {
		for _, l := range strings.Split(p.diff, "\n") {
			b.WriteString(ansi.Truncate(l, max(width-2, 10), "…") + "\n")
		}
	}
	if n := len(sel.StderrTail); n > 0 {
		b.WriteString(st.dim.Render("stderr:") + "\n")
		for _, l := range sel.StderrTail[max(n-5, 0):] {
			b.WriteString(st.dim.Render("  "+ansi.Truncate(l, max(width-4, 10), "…")) + "\n")
		}
	}
	keys := "↑/↓ select · r reconnect · e enable/disable · l login · t tools · + add from the registry · esc"
	switch {
	case sel.State == app.StateIdle:
		keys = "↑/↓ select · enter/s start · e enable/disable · t tools · + add from the registry · esc"
	case heldBackLine(sel) != "":
		keys = "↑/↓ select · d diff · a approve · r reconnect · e enable/disable · l login · t tools · + add from the registry · esc"
	}
	footer := st.dim.Render(wrapKeys(keys, width))
	if p.status != "" {
		footer = p.status + "\n" + footer
	}
	body := strings.TrimRight(b.String(), "\n")
	fh := lipgloss.Height(footer)
	return clipLines(body, max(height-fh-1, 1), true) + "\n\n" + footer
}

// idleLine says why an idle server is not running and what starts it.
func idleLine(s app.ServerStatus) string {
	return fmt.Sprintf("not started yet: otter knows its %s from an earlier connection, and starts it when one is needed (found by tool_search or called), when its resources or prompts are asked for, or now with enter", countOf(s.Tools, "tool"))
}

// rootsLine says which directories the server is offered as MCP roots: a
// server such as server-filesystem confines itself to them, so its
// "Access denied … not in DIR" makes sense only once they are known.
func rootsLine(s app.ServerStatus) string {
	switch {
	case len(s.Roots) == 0:
		return "roots: none offered (it keeps the directories it was started with)"
	case s.RootsByDefault:
		return "roots: " + strings.Join(s.Roots, ", ") + " (the working directory, by default; set roots in the server's config entry to change them)"
	}
	return "roots: " + strings.Join(s.Roots, ", ")
}

// sandboxLine says how a stdio server runs: confined, what it may write
// and which hosts it may reach (any, none, or those of its list), or
// unconfined and why; "" for a remote server.
func sandboxLine(s app.ServerStatus) string {
	sb := s.Sandbox
	switch {
	case sb == nil:
		return ""
	case !sb.On:
		return "sandbox: off (" + sb.Off + ")"
	}
	net := "network allowed"
	switch {
	case len(sb.Hosts) > 0:
		net = "network: only " + termtext.Line(strings.Join(sb.Hosts, ", ")) + " (through otter's proxy)"
	case !sb.Network:
		net = "no network"
	}
	if sb.Weaker != "" {
		net += " — confined less here: " + termtext.Line(sb.Weaker)
	}
	return "sandbox: on · writes " + strings.Join(sb.Write, ", ") + " · " + net
}

// heldBackLine says which of a server's tools are held back because they
// changed since otter pinned them, and how to see and take the change.
func heldBackLine(s app.ServerStatus) string {
	if len(s.HeldBack) == 0 && !s.InstructionsHeldBack {
		return ""
	}
	var changed, added []string
	for _, h := range s.HeldBack {
		if h.New {
			added = append(added, termtext.Line(h.Name))
		} else {
			changed = append(changed, termtext.Line(h.Name))
		}
	}
	var parts []string
	if len(changed) > 0 {
		parts = append(parts, "changed since pinned: "+strings.Join(changed, ", "))
	}
	if len(added) > 0 {
		parts = append(parts, "new: "+strings.Join(added, ", "))
	}
	if s.InstructionsHeldBack {
		parts = append(parts, "its instructions changed")
	}
	return "held back from the model — " + strings.Join(parts, "; ") + " (d shows the change, a takes it; or `otter mcp diff " + s.Name + "`, `otter mcp approve " + s.Name + "`)"
}

// diffText is a server's held-back changes as unified diffs, every
// character visible (the text is the server's).
func diffText(changes []app.ToolChange, err error) string {
	if err != nil {
		return "the changes: " + err.Error()
	}
	if len(changes) == 0 {
		return "nothing is held back now"
	}
	var parts []string
	for _, c := range changes {
		parts = append(parts, termtext.Visible(strings.TrimRight(c.Diff(), "\n")))
	}
	return strings.Join(parts, "\n")
}

// toolsPanel is /mcp tools: a filterable list; enter shows one tool.
type toolsPanel struct {
	listNav
	m      *model
	server string
	detail *tool.Entry
	scroll int
	back   *mcpPanel // the /mcp view it was opened from (t), which esc returns to

	// The last filter's result, kept so that drawing a frame, moving the
	// selection and typing do not each scan every tool: with 20,000 tools
	// a scan with lower-casing took 30 ms and ran several times a key.
	// lower holds the lower-cased names of the server's tools (of, the
	// model's tool list they were taken from), computed once; a query that
	// extends the last one narrows its matches instead of starting over.
	of      []tool.Entry
	all     []tool.Entry // the server's tools (every tool without a server)
	lower   []string     // all's names, lower-cased
	query   string       // the query last matched
	matched []int        // indexes into all that match query
}

func newToolsPanel(m *model, server string) *toolsPanel {
	return &toolsPanel{listNav: newListNav("filter: ", "type to filter tool names"), m: m, server: server}
}

// listNav is what the TUI's filterable lists (/mcp tools, /mcp resources,
// the /resume picker) share: the filter being typed, the selected row and
// whether the list was closed.
type listNav struct {
	filter textinput.Model
	cursor int
	done   bool
}

func newListNav(prompt, placeholder string) listNav {
	ti := textinput.New()
	ti.Prompt = prompt
	ti.Placeholder = placeholder
	ti.Focus()
	return listNav{filter: ti}
}

// head writes a list's title with which of its n rows are shown, and the
// filter below it, and returns the rows [start, end) that fit in height
// with the selected one among them.
func (l *listNav) head(b *strings.Builder, st styles, title string, n, width, height int) (start, end int) {
	rowsRoom := max(height-4, 1)
	start = max(l.cursor-rowsRoom+1, 0)
	end = min(n, start+rowsRoom)
	count := fmt.Sprintf("  %d shown", n)
	if start > 0 || end < n { // not all fit: say which, and that there is more
		count = fmt.Sprintf("  %d–%d of %d shown", start+1, end, n)
		if end < n {
			count += " · ↓ more"
		}
	}
	b.WriteString(st.title.Render(title) + st.dim.Render(count) + "\n")
	// Without a width the input shows only the placeholder's first letter.
	l.filter.SetWidth(max(width-lipgloss.Width(l.filter.Prompt)-2, 10))
	b.WriteString(l.filter.View() + "\n")
	return start, end
}

// navigate handles esc (close), up and down over rows() rows (counted
// only for down: other keys cost nothing); it reports whether key was one
// of them.
func (l *listNav) navigate(key string, rows func() int) bool {
	switch key {
	case "esc":
		l.done = true
	case "up":
		l.cursor = max(l.cursor-1, 0)
	case "down":
		l.cursor = min(l.cursor+1, max(rows()-1, 0))
	default:
		return false
	}
	return true
}

func (p *toolsPanel) finished() bool { return p.done }

// matchCount is how many of the panel's tools (those of its server)
// have names containing the filter, in any case; row(i) is the i-th.
func (p *toolsPanel) matchCount() int {
	p.match()
	return len(p.matched)
}

func (p *toolsPanel) row(i int) tool.Entry { return p.all[p.matched[i]] }

// match brings p.matched up to date with the filter and the tool list.
func (p *toolsPanel) match() {
	tools := p.m.tools
	if len(tools) != len(p.of) || (len(tools) > 0 && &tools[0] != &p.of[0]) {
		// The tool list changed (refresh replaces the slice): start over.
		p.of, p.all, p.lower, p.matched = tools, nil, nil, nil
		for _, e := range tools {
			if p.server == "" || e.Info.Server == p.server {
				p.all = append(p.all, e)
				p.lower = append(p.lower, strings.ToLower(e.Name))
			}
		}
		p.query = ""
		p.matched = make([]int, len(p.all))
		for i := range p.matched {
			p.matched[i] = i
		}
	}
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	if q == p.query {
		return
	}
	from := p.matched
	if !strings.HasPrefix(q, p.query) { // not a narrowing: every tool again
		from = make([]int, len(p.all))
		for i := range from {
			from[i] = i
		}
	}
	var out []int
	for _, i := range from {
		if strings.Contains(p.lower[i], q) {
			out = append(out, i)
		}
	}
	p.query, p.matched = q, out
}

func (p *toolsPanel) update(msg tea.Msg) tea.Cmd {
	k, isKey := msg.(tea.KeyPressMsg)
	if p.detail != nil {
		if isKey {
			switch k.String() {
			case "esc", "q", "backspace":
				p.detail, p.scroll = nil, 0
			case "up", "k":
				p.scroll = max(p.scroll-1, 0)
			case "down", "j":
				p.scroll++
			case "c":
				name := p.detail.Name
				p.done, p.back = true, nil
				return func() tea.Msg { return callRequestMsg{name} }
			}
		}
		return nil
	}
	if isKey {
		if p.navigate(k.String(), p.matchCount) {
			return nil
		}
		switch k.String() {
		case "enter":
			if n := p.matchCount(); n > 0 {
				e := p.row(min(p.cursor, n-1))
				p.detail = &e
			}
			return nil
		}
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	if isKey {
		p.cursor = 0
	}
	return cmd
}

func (p *toolsPanel) view(width, height int) string {
	st := p.m.st
	if p.detail != nil {
		return p.detailView(width, height)
	}
	n := p.matchCount()
	p.cursor = min(p.cursor, max(n-1, 0))
	title := "Tools"
	if p.server != "" {
		title += " of " + p.server
	}
	var b strings.Builder
	start, end := p.head(&b, st, title, n, width, height)
	// Names in one column (as wide as the widest shown, up to half the
	// width), descriptions in the next.
	col := 0
	for i := start; i < end; i++ {
		col = max(col, ansi.StringWidth(p.row(i).Name))
	}
	col = min(col, width/2)
	for i := start; i < end; i++ {
		e := p.row(i)
		name := e.Name
		if pad := col - ansi.StringWidth(name); pad > 0 {
			name += strings.Repeat(" ", pad)
		}
		mark := "  "
		if i == p.cursor {
			mark = st.accent.Render("› ")
			name = st.accent.Bold(true).Render(name)
		}
		desc := strings.SplitN(termtext.Visible(e.Info.Description), "\n", 2)[0]
		if e.Info.Unsupported != "" {
			desc = "[" + e.Info.Unsupported + "] " + desc
		}
		line := mark + name
		if p.m.offer.Deferred[e.Name] {
			line += st.dim.Render("  (deferred)")
		}
		if room := width - lipgloss.Width(line) - 3; room > 8 && desc != "" {
			line += "  " + st.dim.Render(ansi.Truncate(desc, room, "…"))
		}
		b.WriteString(line + "\n")
	}
	if n == 0 {
		b.WriteString(st.dim.Render("  no tool matches") + "\n")
	}
	body := clipLines(strings.TrimRight(b.String(), "\n"), max(height-2, 1), true)
	esc := "esc close"
	if p.back != nil {
		esc = "esc back to /mcp"
	}
	return body + "\n\n" + st.dim.Render("type to filter · ↑/↓ select · enter details · "+esc)
}

func (p *toolsPanel) detailView(width, height int) string {
	st := p.m.st
	e := p.detail
	wrap := lipgloss.NewStyle().Width(max(width-2, 20))
	var b strings.Builder
	b.WriteString(st.title.Render(e.Name) + "\n")
	src := "built-in"
	if e.Info.Server != "" {
		src = "server " + termtext.Line(e.Info.Server) + ", tool " + termtext.Line(e.Info.Name)
	}
	b.WriteString(st.dim.Render(src) + "\n")
	if e.Info.Unsupported != "" {
		b.WriteString(st.errText.Render(e.Info.Unsupported+": it is not offered to the model") + "\n")
	}
	if e.Info.Title != "" {
		b.WriteString(termtext.Line(e.Info.Title) + "\n")
	}
	if e.Info.Description != "" {
		b.WriteString("\n" + wrap.Render(termtext.Visible(e.Info.Description)) + "\n")
	}
	var ann []string
	if a := e.Info.Annotations; a != nil {
		if a.ReadOnlyHint {
			ann = append(ann, "read-only")
		}
		if e.Info.Destructive() {
			ann = append(ann, "destructive")
		}
		if a.IdempotentHint {
			ann = append(ann, "idempotent")
		}
		if a.OpenWorldHint != nil && *a.OpenWorldHint {
			ann = append(ann, "open world")
		}
	}
	if len(ann) == 0 {
		ann = append(ann, "none")
	}
	b.WriteString("\n" + st.accent.Render("annotations: ") + strings.Join(ann, ", ") + "\n")
	b.WriteString("\n" + st.accent.Render("input schema:") + "\n")
	b.WriteString(st.dim.Render(wrapIndented(prettyJSON(e.Info.InputSchema, 1000), width)) + "\n")
	if len(e.Info.OutputSchema) > 0 {
		b.WriteString("\n" + st.accent.Render("output schema:") + "\n")
		b.WriteString(st.dim.Render(wrapIndented(prettyJSON(e.Info.OutputSchema, 1000), width)) + "\n")
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	room := max(height-2, 1)
	p.scroll = min(p.scroll, max(len(lines)-room, 0))
	lines = lines[p.scroll:]
	return clipLines(strings.Join(lines, "\n"), room, true) + "\n\n" +
		st.dim.Render("↑/↓ scroll · c call it · esc back")
}

// callRequestMsg opens the /call form for a tool.
type callRequestMsg struct{ name string }
