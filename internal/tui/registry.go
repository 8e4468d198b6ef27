package tui

// /mcp search [QUERY] (and + in /mcp): servers from the MCP Registry
// ([mcp] registry, or the official one). Enter searches what is typed;
// on a result it adds the server: how it runs (when it offers several
// ways), then a form with its name, the config file's scope and the values
// it needs (the /call form's fields), its secrets named as the environment
// variables it reads. The entry is written to the config file and the
// configuration reloaded, so the server starts.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/registry"
	"github.com/otter-sh/otter/internal/termtext"
)

// registryPanel is the registry's search.
type registryPanel struct {
	listNav
	m         *model
	client    *registry.Client
	err       error   // the client could not be made, or the last search failed
	searched  *string // the query of the results shown; nil before any search
	res       *registry.Result
	searching bool
}

// registryFoundMsg is the end of a registry search.
type registryFoundMsg struct {
	p     *registryPanel
	query string
	res   *registry.Result
	err   error
}

// registryAddedMsg is the end of adding a server from the registry.
type registryAddedMsg struct {
	name, file string
	local      bool // a stdio server, run in the sandbox
	notes      []string
	diff       app.ReloadDiff
	err        error
}

// newRegistryPanel opens the search, and searches query at once when it
// is not "".
func newRegistryPanel(m *model, query string) (*registryPanel, tea.Cmd) {
	p := &registryPanel{listNav: newListNav("search the MCP Registry: ", "a server's name, then enter"), m: m}
	cfg := m.app.Config()
	p.client, p.err = registry.New(registry.Options{URL: cfg.MCP.Registry, CacheDir: m.app.Paths.CacheDir, UserAgent: "otter"})
	if query == "" || p.err != nil {
		return p, nil
	}
	p.filter.SetValue(query)
	return p, p.search()
}

func (p *registryPanel) finished() bool { return p.done }

// search asks the registry for what is typed, off the UI's loop.
func (p *registryPanel) search() tea.Cmd {
	if p.client == nil {
		return nil
	}
	q := strings.TrimSpace(p.filter.Value())
	p.searching = true
	c, ctx := p.client, p.m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		res, err := c.Search(ctx, q, 50)
		return registryFoundMsg{p: p, query: q, res: res, err: err}
	}
}

func (p *registryPanel) rows() int {
	if p.res == nil {
		return 0
	}
	return len(p.res.Servers)
}

func (p *registryPanel) update(msg tea.Msg) tea.Cmd {
	if f, ok := msg.(registryFoundMsg); ok {
		if f.p == p {
			q := f.query
			p.searched, p.res, p.err, p.cursor, p.searching = &q, f.res, f.err, 0, false
		}
		return nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if p.navigate(k.String(), p.rows) {
			return nil
		}
		if k.String() == "enter" {
			typed := strings.TrimSpace(p.filter.Value())
			if p.searched == nil || *p.searched != typed || p.rows() == 0 {
				return p.search()
			}
			p.done = true
			return p.m.addFromRegistry(p, p.res.Servers[p.cursor].Server)
		}
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	return cmd
}

func (p *registryPanel) view(width, height int) string {
	st := p.m.st
	n := p.rows()
	var b strings.Builder
	start, end := p.head(&b, st, "MCP Registry", n, width, height-1)
	switch {
	case p.client == nil:
		b.WriteString(st.errText.Render(ansi.Wordwrap(p.err.Error(), max(width-2, 20), " ")) + "\n")
	case p.searching:
		b.WriteString(st.dim.Render("  searching "+p.client.URL()+"…") + "\n")
	case p.err != nil:
		b.WriteString(st.errText.Render(ansi.Wordwrap(p.err.Error(), max(width-2, 20), " ")) + "\n")
	case p.searched == nil:
		b.WriteString(st.dim.Render("  type a name and press enter to search "+p.client.URL()) + "\n")
	case n == 0:
		b.WriteString(st.dim.Render(fmt.Sprintf("  no server's name holds %q", *p.searched)) + "\n")
	}
	if p.res != nil && p.res.Cached != nil && !p.searching {
		b.WriteString(st.warn.Render(ansi.Wordwrap(fmt.Sprintf("the registry cannot be reached (%v): these are its answers of %s, cached",
			p.res.Cached.Err, p.res.Cached.FetchedAt.Local().Format(time.DateTime)), max(width-2, 20), " ")) + "\n")
	}
	col := 0
	for i := start; i < end; i++ {
		col = max(col, ansi.StringWidth(termtext.Line(p.res.Servers[i].Server.Name)))
	}
	col = min(col, width/2)
	for i := start; i < end; i++ {
		s := p.res.Servers[i].Server
		name := ansi.Truncate(termtext.Line(s.Name), col, "…")
		name += strings.Repeat(" ", max(col-ansi.StringWidth(name), 0))
		mark := "  "
		if i == p.cursor {
			mark = st.accent.Render("› ")
			name = st.accent.Bold(true).Render(name)
		}
		line := mark + name + st.dim.Render("  "+termtext.Line(s.Version)+" · "+runsAs(s))
		if room := width - lipgloss.Width(line) - 3; room > 8 {
			line += "  " + st.dim.Render(ansi.Truncate(termtext.Line(s.Description), room, "…"))
		}
		b.WriteString(line + "\n")
	}
	body := clipLines(strings.TrimRight(b.String(), "\n"), max(height-2, 1), true)
	return body + "\n\n" + st.dim.Render(wrapKeys("type a name · enter search · ↑/↓ select · enter on a result adds it · esc close", width))
}

// runsAs lists the kinds of way otter can run s by ("npm, remote").
func runsAs(s registry.Server) string {
	if kinds := s.Kinds(); len(kinds) > 0 {
		return strings.Join(kinds, ", ")
	}
	return "none otter runs"
}

// addFromRegistry asks how s is to run when it offers several ways, then
// what it needs; back is the search to return to on esc.
func (m *model) addFromRegistry(back *registryPanel, s registry.Server) tea.Cmd {
	var usable []registry.Way
	for _, w := range s.Ways() {
		if w.Unsupported == "" {
			usable = append(usable, w)
		}
	}
	reopen := func() tea.Cmd {
		back.done = false
		return func() tea.Msg { return openPanelMsg{back} }
	}
	switch len(usable) {
	case 0:
		_, err := s.Pick("")
		m.notice(itemError, err.Error())
		return reopen()
	case 1:
		return m.registryForm(back, s, usable[0])
	}
	choice := 0
	opts := make([]huh.Option[int], len(usable))
	for i, w := range usable {
		opts[i] = huh.NewOption(termtext.Line(w.Label), i)
	}
	heading := m.st.title.Render("add "+termtext.Line(s.Name)) + "\n" + termtext.Line(s.Description)
	fm := newFormModal(m, heading, m.st.dim.Render("enter choose · esc back"),
		huh.NewGroup(huh.NewSelect[int]().Title("How it runs").Options(opts...).Value(&choice)))
	fm.onSubmit = func() tea.Cmd { return m.registryForm(back, s, usable[choice]) }
	fm.onEsc = reopen
	return func() tea.Msg { return openPanelMsg{fm} }
}

// registryForm asks the entry's name and scope and the values way needs,
// then adds it.
func (m *model) registryForm(back *registryPanel, s registry.Server, way registry.Way) tea.Cmd {
	name := s.LocalName()
	params, err := s.Params(way, name)
	if err != nil {
		m.notice(itemError, err.Error())
		return nil
	}
	// The values as a form: the /call form's fields, from a schema whose
	// properties are the params (their IDs).
	var props []string
	var required []string
	var secrets []string
	for _, p := range params {
		if p.Secret {
			state := "not set now"
			if _, ok := os.LookupEnv(p.EnvVar); ok {
				state = "set now"
			}
			secrets = append(secrets, fmt.Sprintf("%s %s: read from $%s (%s)", p.Kind, termtext.Line(p.Name), p.EnvVar, state))
			continue
		}
		prop := map[string]any{"type": "string", "title": string(p.Kind) + " " + termtext.Line(p.Name)}
		desc := termtext.Line(p.Description)
		if p.Repeated {
			desc = strings.TrimSpace(desc + " (several: separate them with commas)")
		}
		if p.Of != "" {
			desc = strings.TrimSpace(desc + " (in " + p.Of + ")")
		}
		if desc != "" {
			prop["description"] = desc
		}
		if p.Default != "" {
			prop["default"] = p.Default
		}
		if len(p.Choices) > 0 {
			prop["enum"] = p.Choices
		}
		raw, _ := json.Marshal(prop)
		key, _ := json.Marshal(p.ID())
		props = append(props, string(key)+":"+string(raw))
		if p.Required {
			required = append(required, string(key))
		}
	}
	schemaJSON := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(required, ",") + `]}`
	sf, err := buildSchemaForm(json.RawMessage(schemaJSON))
	if err != nil {
		m.notice(itemError, err.Error())
		return nil
	}
	taken := map[string]bool{}
	for _, srv := range m.app.Config().MCP.Servers {
		taken[srv.Name] = true
	}
	scope := string(config.ScopeUser)
	fields := []huh.Field{
		huh.NewInput().Title("Name in the config *").Value(&name).Validate(func(v string) error {
			switch {
			case strings.TrimSpace(v) == "":
				return errors.New("give it a name")
			case taken[strings.TrimSpace(v)]:
				return fmt.Errorf("a server named %q is configured already", v)
			}
			return nil
		}),
		huh.NewSelect[string]().Title("Config file").Value(&scope).Options(
			huh.NewOption("user: "+m.app.Paths.ShortUserConfigFile(), string(config.ScopeUser)),
			huh.NewOption("project: .otter/config.toml (shared)", string(config.ScopeProject)),
			huh.NewOption("local: .otter/config.local.toml (yours)", string(config.ScopeLocal))),
	}
	fields = append(fields, sf.fields...)
	heading := m.st.title.Render("add "+termtext.Line(s.Name)+" "+termtext.Line(s.Version)) + "\n" + termtext.Line(way.Label)
	if len(secrets) > 0 {
		heading += "\n" + m.st.dim.Render("secrets are never written; the entry reads them from the environment:\n  "+strings.Join(secrets, "\n  "))
	}
	fm := newFormModal(m, heading, m.st.dim.Render("enter next · shift+tab back · esc back to the search"), huh.NewGroup(fields...))
	fm.onEsc = func() tea.Cmd {
		back.done = false
		return func() tea.Msg { return openPanelMsg{back} }
	}
	fm.onSubmit = func() tea.Cmd {
		content, err := sf.collect()
		if err != nil {
			m.notice(itemError, err.Error())
			return nil
		}
		values := registry.Values{}
		for id, v := range content {
			text, _ := v.(string)
			if text == "" {
				continue
			}
			values[id] = []string{text}
			if i := paramIndex(params, id); i >= 0 && params[i].Repeated {
				values[id] = nil
				for _, part := range strings.Split(text, ",") {
					if part = strings.TrimSpace(part); part != "" {
						values[id] = append(values[id], part)
					}
				}
			}
		}
		return m.writeRegistryEntry(s, way, strings.TrimSpace(name), config.Scope(scope), values, params)
	}
	return func() tea.Msg { return openPanelMsg{fm} }
}

func paramIndex(params []registry.Param, id string) int {
	for i, p := range params {
		if p.ID() == id {
			return i
		}
	}
	return -1
}

// writeRegistryEntry adds the entry to the config file of scope and
// reloads the configuration, off the UI's loop.
func (m *model) writeRegistryEntry(s registry.Server, way registry.Way, name string, scope config.Scope, values registry.Values, params []registry.Param) tea.Cmd {
	a, ctx := m.app, m.ctx
	return func() tea.Msg {
		srv, err := s.Entry(way, name, values, os.LookupEnv)
		if err != nil {
			return registryAddedMsg{name: name, err: err}
		}
		lo := config.LoadOptions{Paths: a.Paths, WorkDir: a.WorkDir}
		file, err := config.AddServerTo(lo, scope, srv, fmt.Sprintf("From the MCP Registry: %s %s (%s)", s.Name, s.Version, way.Label))
		if err != nil {
			return registryAddedMsg{name: name, err: err}
		}
		var notes []string
		for _, p := range params {
			if p.Secret {
				if _, ok := os.LookupEnv(p.EnvVar); !ok && p.Required {
					notes = append(notes, fmt.Sprintf("set $%s before it starts (%s %s)", p.EnvVar, p.Kind, p.Name))
				}
			}
		}
		diff, err := a.Reload(ctx)
		return registryAddedMsg{name: name, file: file, local: srv.Command != "", notes: notes, diff: diff, err: err}
	}
}

// registryAdded says how adding a server went.
func (m *model) registryAdded(msg registryAddedMsg) {
	m.refresh()
	if msg.err != nil {
		m.notice(itemError, fmt.Sprintf("adding %s: %v", msg.name, msg.err))
		return
	}
	text := fmt.Sprintf("added %s to %s", msg.name, msg.file)
	if msg.local {
		text += "; it runs in otter's sandbox"
	}
	if len(msg.notes) > 0 {
		text += " — " + strings.Join(msg.notes, "; ")
	}
	m.notice(itemInfo, text)
}
