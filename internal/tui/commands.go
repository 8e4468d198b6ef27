package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/termtext"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
)

// promptReadyMsg sends a prompt's text; with res, a PromptBackend sends
// the prompt's messages whole instead (see resources.go).
type promptReadyMsg struct {
	text   string
	server string
	res    *sdk.GetPromptResult
}

var slashCommands = []string{"/help", "/clear", "/new", "/fork", "/rename", "/resume", "/quit", "/mcp", "/mcp tools", "/mcp resources", "/mcp prompts", "/mcp search", "/mcp reload", "/open", "/call", "/image", "/trust", "/copy", "/copy code", "/compact", "/cost", "/usage", "/model", "/memory", "/export", "/permissions", "/permissions remove", "/undo", "/rewind", "/init"}

const helpText = `Commands
  /mcp                     MCP servers: state, tools, errors; r reconnect · e enable/disable · l login · t tools
  /mcp tools [server]      filterable list of tools; enter shows description, input schema, annotations
  /mcp resources [server]  resources and templates; enter previews, tab attaches as @server:uri
  /mcp prompts [server]    prompts and their arguments; enter uses one, tab puts it in the input
  /mcp search [name]       servers of the MCP Registry; enter on one adds it (a form asks what it needs)
  /mcp reload              re-read the config; only changed servers restart
  /call TOOL [json]        call a tool by hand (a form from its input schema) and see its whole result
  /mcp__server__prompt     use a server's prompt: [arg=value …], or a form
  @server:uri              in a message: attach that resource (tab completes after @)
  /open [N]                preview resource link N of the last tool result
  /image [N]               view image N from a tool result (the latest without N)
  /copy [N]                copy the last answer (N: the Nth back) to the clipboard as Markdown
  /copy code [N]           copy code block N of the last answer (the last one without N)
  /trust                   ask again whether to trust this project (its servers and settings)
  /permissions             the saved permission rules and their files; /permissions remove N removes one
  /clear                   forget the conversation · saved ones: /new /fork /rename /resume [ID]
  /export [FILE]           write the conversation as Markdown (otter-ID.md here without FILE)
  /undo                    take back the last turn: the files otter's edits changed, and the turn itself
  /rewind                  go back to before one of your messages: the conversation, the files, or both
  /init                    have the model look at the project and write or improve AGENTS.md
  /model [PROVIDER/MODEL] · /compact [KEEP] · /cost · /usage · /memory [N] · /help · /quit
  /skills · /hooks         your Agent Skills and hooks; your own commands are listed below

Keys
  enter send (while otter works: queued, sent when it is done) · shift+enter / alt+enter new line
  ↑/↓ history (↑ first takes back the last queued message) · tab complete (again: the next; → keeps it)
  esc clear the queue, then cancel the running generation or call · ctrl+o expand tool results and pastes
  mouse wheel or pgup/pgdown scroll · home/end top/bottom (with an empty input; else ctrl+home/ctrl+end)
  shift+drag selects text while the wheel scrolls (option+drag in iTerm2); ctrl+s turns the mouse off/on
  ctrl+y view the latest image · ctrl+c stops what runs, twice quits`

// resetChat has the core forget the conversation (/clear).
func (m *model) resetChat() {
	if err := m.conv.Clear(m.ctx); err != nil {
		m.notice(itemError, "the conversation is cleared here, but: "+err.Error())
	}
}

func (m *model) command(line string) tea.Cmd {
	cmd, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	if c, ok := m.contextCommand(cmd, rest); ok {
		return c
	}
	if c, ok := m.projectCommand(cmd, rest); ok { // project.go
		return c
	}
	switch cmd {
	case "/help", "/?":
		m.notice(itemInfo, helpText+m.extensionHelp())
		m.showTop() // on a small screen, its start: the commands
	case "/clear":
		m.cancel()
		m.conv.ClearQueue()
		if m.busy { // the agent forgets once the canceled turn has ended
			m.clearAfterTurn = true
		} else {
			m.resetChat()
		}
		m.tr.items = nil
		m.follow()
		m.ctxLine = m.contextStatus()
		m.notice(itemInfo, "conversation cleared")
		return m.forgetImages()
	case "/quit", "/exit", "/q":
		return m.quit()
	case "/trust":
		req := trustRequest(m.app)
		if req == nil {
			m.notice(itemInfo, "nothing to trust here: no untrusted project configuration or instruction files, and nothing changed since you trusted it")
			return nil
		}
		m.questions = append(m.questions, &activeQuestion{md: newTrustModal(m, req, true)})
		return m.startQuestion(len(m.questions) == 1)
	case "/mcp":
		sub, arg, _ := strings.Cut(rest, " ")
		switch sub {
		case "":
			m.refresh()
			m.panel = newMCPPanel(m)
		case "tools":
			m.refresh()
			server := strings.TrimSpace(arg)
			known := slices.ContainsFunc(m.servers, func(s app.ServerStatus) bool { return s.Name == server }) ||
				slices.ContainsFunc(m.tools, func(e tool.Entry) bool { return e.Info.Server == server })
			if server != "" && !known {
				names := make([]string, 0, len(m.servers))
				for _, s := range m.servers {
					names = append(names, s.Name)
				}
				m.notice(itemError, fmt.Sprintf("no MCP server is named %q (servers: %s); /mcp tools alone lists every tool", server, strings.Join(names, ", ")))
				return nil
			}
			m.panel = newToolsPanel(m, server)
		case "resources", "prompts":
			return m.mcpOffers(sub, strings.TrimSpace(arg))
		case "search":
			p, cmd := newRegistryPanel(m, strings.TrimSpace(arg)) // registry.go
			m.panel = p
			return cmd
		case "reload":
			a, ctx := m.app, m.ctx
			m.notice(itemInfo, "reloading the config…")
			return func() tea.Msg {
				diff, err := a.Reload(ctx)
				return reloadedMsg{diff: diff, err: err}
			}
		default:
			m.notice(itemError, fmt.Sprintf("unknown /mcp command %q: use /mcp, /mcp tools [server], /mcp resources [server], /mcp prompts [server], /mcp search [name] or /mcp reload", sub))
		}
	case "/permissions":
		return m.permissionsCommand(rest) // permissions.go
	case "/open":
		return m.openLink(rest)
	case "/call":
		return m.callCommand(rest)
	case "/copy":
		return m.copyCommand(rest)
	case "/image":
		n, err := parseImageArg(rest)
		if err != nil {
			m.notice(itemError, err.Error())
			return nil
		}
		return m.viewImage(n)
	case "/init": // app's built-in command, sent as its prompt
		return m.chat(line)
	default:
		if c, ok := m.undoCommand(cmd); ok { // undo.go
			return c
		}
		if c, ok := m.sessionCommand(cmd, rest); ok { // session.go
			return c
		}
		if p, ok := m.findPrompt(cmd); ok {
			return m.promptCommand(p, rest)
		}
		if c, ok := m.extensionCommand(cmd); ok { // extensions.go
			return c
		}
		if m.userCommand(cmd) {
			return m.chat(line)
		}
		if why := m.untrustedCommand(line); why != "" {
			m.notice(itemError, why)
			return nil
		}
		m.notice(itemError, fmt.Sprintf("unknown command %s — /help lists them", cmd))
	}
	return nil
}

func (m *model) callCommand(args string) tea.Cmd {
	name, raw, _ := strings.Cut(args, " ")
	if name == "" {
		m.notice(itemError, "usage: /call TOOL [json arguments] — tab completes tool names")
		return nil
	}
	m.refresh()
	e, err := tool.Resolve(m.tools, name)
	var amb *tool.AmbiguousError
	switch {
	case errors.As(err, &amb):
		m.notice(itemError, fmt.Sprintf("%s is ambiguous: %d servers offer it — use one of %s", name, len(amb.Candidates), strings.Join(amb.Candidates, ", ")))
		return nil
	case err != nil:
		m.notice(itemError, fmt.Sprintf("no tool named %s — /mcp tools lists them", name))
		return nil
	}
	if raw = strings.TrimSpace(raw); raw != "" {
		if !json.Valid([]byte(raw)) {
			m.notice(itemError, "the arguments are not valid JSON: "+raw)
			return nil
		}
		return m.runCall(e.Name, json.RawMessage(raw))
	}
	sf, err := buildSchemaForm(e.Info.InputSchema)
	if err != nil {
		m.notice(itemError, fmt.Sprintf("%s: %v; pass JSON arguments: /call %s {…}", e.Name, err, e.Name))
		return nil
	}
	if len(sf.fields) == 0 {
		return m.runCall(e.Name, json.RawMessage(`{}`))
	}
	heading := m.st.title.Render("/call "+e.Name) + "\n" + firstLines(termtext.Visible(e.Info.Description), 3)
	fm := newFormModal(m, heading, m.st.dim.Render("enter next · shift+tab back · esc close"), huh.NewGroup(sf.fields...))
	fm.onSubmit = func() tea.Cmd {
		content, err := sf.collect()
		if err != nil {
			m.notice(itemError, err.Error())
			return nil
		}
		return m.runCall(e.Name, mustJSON(content))
	}
	m.panel = fm
	return fm.init()
}

// runCall calls a tool by hand; the whole result shows in the transcript.
func (m *model) runCall(name string, args json.RawMessage) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.callSeq++
	it := &toolItem{id: fmt.Sprintf("/call-%d", m.callSeq), name: name,
		args: compactJSON(args), start: time.Now(), rawCall: true, cancel: cancel}
	m.tr.add(it)
	m.toolItems[it.id] = it
	m.calls++
	m.follow()
	a, ui, id := m.app, m.ui, it.id
	ctx = tool.WithProgress(ctx, func(p tool.Progress) {
		go ui.send(chatEventMsg{turn: -1, ev: agent.ToolProgress{ID: id, Progress: p}})
	})
	return tea.Batch(func() tea.Msg {
		start := time.Now()
		res, err := a.CallTool(ctx, name, args)
		cancel()
		return callDoneMsg{it: it, res: res, err: err, elapsed: time.Since(start)}
	}, m.startSpinner())
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

// --- prompts ---

func promptCommand(p app.Prompt) string { return "/" + toolname.Qualified(p.Server, p.Name) }

func (m *model) findPrompt(cmd string) (app.Prompt, bool) {
	for _, p := range m.prompts {
		if promptCommand(p) == cmd {
			return p, true
		}
	}
	return app.Prompt{}, false
}

func (m *model) promptCommand(p app.Prompt, rest string) tea.Cmd {
	vals, err := promptArgs(p, rest)
	if err != nil {
		m.notice(itemError, fmt.Sprintf("%s: %v", promptCommand(p), err))
		m.giveBack(strings.TrimSpace(promptCommand(p) + " " + rest))
		return nil
	}
	missing := false
	for _, a := range p.Arguments {
		if a.Required && vals[a.Name] == "" {
			missing = true
		}
	}
	if !missing {
		return m.expandPrompt(p, vals)
	}
	var fields []huh.Field
	accs := map[string]*lockedValue{}
	for _, a := range p.Arguments {
		v := vals[a.Name]
		accs[a.Name] = &lockedValue{plain: &v, v: v}
	}
	// others is the completion context of an argument: what the other
	// fields hold now (completable-prompt's name depends on department).
	others := func(arg string) map[string]string {
		ctx := map[string]string{}
		for k, acc := range accs {
			if v := acc.Get(); k != arg && v != "" {
				ctx[k] = v
			}
		}
		return ctx
	}
	for _, a := range p.Arguments {
		acc := accs[a.Name]
		title := a.Name
		if a.Required {
			title += " *"
		}
		in := huh.NewInput().Title(title).Description(a.Description).Accessor(acc)
		m.completeArg(in, p, a.Name, acc, others)
		if a.Required {
			in.Validate(func(s string) error {
				if strings.TrimSpace(s) == "" {
					return fmt.Errorf("required")
				}
				return nil
			})
		}
		fields = append(fields, in)
	}
	heading := m.st.title.Render(promptCommand(p)) + "\n" + p.Description
	fm := newFormModal(m, heading, m.st.dim.Render("enter next · esc close"), huh.NewGroup(fields...))
	fm.onSubmit = func() tea.Cmd {
		for k, acc := range accs {
			if v := acc.Get(); v != "" {
				vals[k] = v
			}
		}
		return m.expandPrompt(p, vals)
	}
	m.panel = fm
	return fm.init()
}

// promptArgs parses a prompt's arguments as typed after its command:
// key=value words, a value quoted like the shell's ("New York" or
// 'New York'; \" in double quotes). A prompt with one argument also takes
// the whole rest as its value. Unknown names and unbalanced quotes are
// refused, naming what is wrong.
func promptArgs(p app.Prompt, rest string) (map[string]string, error) {
	vals := map[string]string{}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return vals, nil
	}
	words, err := splitWords(rest)
	if len(p.Arguments) == 1 && !strings.Contains(rest, "=") {
		if err != nil || len(words) != 1 {
			words = []string{rest} // the whole rest, as typed
		}
		vals[p.Arguments[0].Name] = words[0]
		return vals, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range p.Arguments {
		names = append(names, a.Name)
	}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not NAME=VALUE (quote a value with spaces: city=\"New York\")", w)
		}
		if !slices.Contains(names, k) {
			if len(names) == 0 {
				return nil, fmt.Errorf("the prompt takes no arguments, but %q was given", k)
			}
			return nil, fmt.Errorf("the prompt has no argument %q; its arguments are %s", k, strings.Join(names, ", "))
		}
		vals[k] = v
	}
	return vals, nil
}

// splitWords splits s into words at unquoted white space, as a shell
// does without expanding anything: '…' is literal, "…" takes \" and \\,
// and a backslash outside quotes escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\':
			escaped, inWord = true, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("a %c quote is not closed", quote)
	}
	if escaped {
		w.WriteRune('\\')
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// quoteWord quotes v, when it needs it, so that splitWords reads it back
// as one word: the transcript's summary of a prompt can be typed again.
func quoteWord(v string) string {
	if v != "" && !strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("\"'\\", r) }) {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

func (m *model) expandPrompt(p app.Prompt, vals map[string]string) tea.Cmd {
	a, ctx := m.app, m.ctx
	return func() tea.Msg {
		res, err := a.GetPrompt(ctx, p.Server, p.Name, vals)
		if err != nil {
			return noticeMsg{itemError, fmt.Sprintf("prompt %s from %s: %v", p.Name, p.Server, err)}
		}
		if len(res.Messages) == 0 {
			return noticeMsg{itemError, fmt.Sprintf("prompt %s from %s has no text", p.Name, p.Server)}
		}
		var parts []string
		for _, msg := range res.Messages {
			if t, ok := msg.Content.(*sdk.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
		// The messages go whole (text, images, embedded resources, with
		// their roles); the transcript shows the command and the text.
		return promptReadyMsg{text: promptSummary(p, vals, parts), server: p.Server, res: res}
	}
}

// --- completion ---

// completion remembers the candidates of the last Tab that found several,
// so that the next Tab, on the same input, offers the next one.
type completion struct {
	base    string
	matches []string
	i       int    // the candidate shown; -1 before the first cycle
	value   string // the input the last Tab left
}

func (m *model) complete() tea.Cmd {
	v := m.input.Value()
	mentionBase, mentionCands, isMention, ask := m.mentionCandidates(v)
	if ask != nil {
		return ask // the server's values arrive as a templateValuesMsg
	}
	if !isMention && (!strings.HasPrefix(v, "/") || strings.Contains(v, "\n")) {
		return nil
	}
	if c := m.cycle; c != nil && v == c.value {
		c.i = (c.i + 1) % len(c.matches)
		c.value = c.base + c.matches[c.i]
		m.input.SetValue(c.value)
		from := c.i / shownCandidates * shownCandidates // the page of the one shown
		m.hint = fmt.Sprintf("%d/%d  %s", c.i+1, len(c.matches), strings.Join(candidatePage(c.matches, from), "  "))
		return nil
	}
	m.cycle = nil
	var base string
	var cands []string
	switch {
	case isMention:
		base, cands = mentionBase, mentionCands
	case strings.HasPrefix(v, "/call "):
		base = "/call "
		short := map[string]int{} // a server's own tool name → how many servers offer it
		for _, e := range m.tools {
			if e.Info.Server != "" {
				short[e.Info.Name]++
			}
		}
		for _, e := range m.tools {
			cands = append(cands, e.Name)
			if e.Info.Server != "" && short[e.Info.Name] == 1 && e.Info.Name != e.Name {
				cands = append(cands, e.Info.Name) // /call takes it alone
			}
		}
	case strings.HasPrefix(v, "/mcp tools "), strings.HasPrefix(v, "/mcp resources "), strings.HasPrefix(v, "/mcp prompts "):
		base = v[:strings.Index(v[len("/mcp "):], " ")+len("/mcp ")+1]
		for _, s := range m.servers {
			cands = append(cands, s.Name)
		}
	default:
		cands = append(cands, slashCommands...)
		cands = append(cands, "/skills", "/hooks")
		cands = append(cands, m.userCommandNames()...)
		for _, p := range m.prompts {
			cands = append(cands, promptCommand(p))
		}
	}
	word := strings.TrimPrefix(v, base)
	var matches []string
	for _, c := range cands {
		if strings.HasPrefix(c, word) {
			matches = append(matches, c)
		}
	}
	sort.Strings(matches)
	matches = slices.Compact(matches) // a skill named like a built-in command is one candidate
	switch len(matches) {
	case 0:
		m.hint = "no completion for " + v
	case 1:
		sep := " "
		if isMention && (strings.Contains(matches[0], "{") || strings.HasSuffix(matches[0], "/")) {
			sep = "" // a template: Tab next completes its {variable}
		}
		m.input.SetValue(base + matches[0] + sep)
		m.hint = ""
	default:
		prefix := matches[0]
		for _, s := range matches[1:] {
			for !strings.HasPrefix(s, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
		m.input.SetValue(base + prefix)
		m.cycle = &completion{base: base, matches: matches, i: -1, value: base + prefix}
		keys := "(tab again cycles)  "
		if isMention {
			keys = "(tab again cycles, → keeps one)  " // then Tab goes on to a template's next {variable}
		}
		m.hint = keys + strings.Join(candidatePage(matches, 0), "  ") // the keys first
	}
	return nil
}

// shownCandidates is how many of Tab's candidates the hint lists at once.
const shownCandidates = 8

// candidatePage returns the candidates from index from that the hint
// lists, with a count of the others.
func candidatePage(matches []string, from int) []string {
	shown := matches[from:min(from+shownCandidates, len(matches))]
	if rest := len(matches) - len(shown); rest > 0 {
		shown = append(shown[:len(shown):len(shown)], fmt.Sprintf("… %d more", rest))
	}
	return shown
}
