package tui

// /mcp resources and /mcp prompts: what servers offer besides tools. The
// browser lists every connected server's resources and resource templates,
// filterable; Enter previews one (text and JSON as text, binary content by
// type and size), a attaches it to the next message as an @SERVER:URI
// mention, which the backend expands when the message is sent.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/attach"
	"github.com/otter-sh/otter/internal/tool"
)

// resourceItem is one row of the browser: a resource or a template.
type resourceItem struct {
	server, uri, template, name, mime, desc string
}

func (r resourceItem) mention() string {
	return "@" + r.server + ":" + r.uri
}

func (r resourceItem) label() string {
	if r.template != "" {
		return r.server + ":" + r.template
	}
	return r.server + ":" + r.uri
}

// resourceItems lists the resources and templates of the backend, of one
// server or all.
func resourceItems(a *app.App, server string) []resourceItem {
	var out []resourceItem
	for _, r := range a.Resources() {
		if server == "" || r.Server == server {
			out = append(out, resourceItem{server: r.Server, uri: r.URI, name: r.Name, mime: r.MIMEType, desc: r.Description})
		}
	}
	for _, t := range a.ResourceTemplates() {
		if server == "" || t.Server == server {
			out = append(out, resourceItem{server: t.Server, template: t.URITemplate, name: t.Name, mime: t.MIMEType, desc: t.Description})
		}
	}
	return out
}

// resourcePreviewMsg carries a read resource to the browser.
type resourcePreviewMsg struct {
	key    string
	text   string
	err    error
	images []*toolImage // the resource's images, for v
}

// resourcesPanel is /mcp resources.
type resourcesPanel struct {
	listNav
	m       *model
	items   []resourceItem
	preview *resourcePreviewMsg // shown when set
	shown   resourceItem        // what the preview shows
	loading string
	scroll  int
	// direct: the panel was opened on a preview (/open N), so leaving the
	// preview leaves the panel, back to the chat.
	direct bool
}

func newResourcesPanel(m *model, server string) *resourcesPanel {
	return &resourcesPanel{listNav: newListNav("filter: ", "type to filter by server, URI or name"), m: m, items: resourceItems(m.app, server)}
}

func (p *resourcesPanel) finished() bool { return p.done }

func (p *resourcesPanel) matches() []resourceItem {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	var out []resourceItem
	for _, it := range p.items {
		if q == "" || strings.Contains(strings.ToLower(it.label()+" "+it.name), q) {
			out = append(out, it)
		}
	}
	return out
}

func (p *resourcesPanel) selected() (resourceItem, bool) {
	ms := p.matches()
	if len(ms) == 0 {
		return resourceItem{}, false
	}
	p.cursor = min(max(p.cursor, 0), len(ms)-1)
	return ms[p.cursor], true
}

func (p *resourcesPanel) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case resourcePreviewMsg:
		if msg.key == p.loading {
			p.preview, p.loading, p.scroll = &msg, "", 0
		}
		return nil
	case tea.KeyPressMsg:
		if p.preview != nil {
			switch msg.String() {
			case "esc", "q", "backspace":
				p.preview = nil
				p.done = p.direct
			case "up", "k":
				p.scroll = max(p.scroll-1, 0)
			case "down", "j":
				p.scroll++
			case "a":
				return p.attach(p.shown)
			case "v":
				if len(p.preview.images) > 0 {
					return p.m.viewPreviewImage(p.preview.images[0])
				}
			}
			return nil
		}
		if p.navigate(msg.String(), func() int { return len(p.matches()) }) {
			return nil
		}
		switch msg.String() {
		case "enter":
			it, ok := p.selected()
			if !ok {
				return nil
			}
			return p.open(it)
		case "tab", "ctrl+a":
			if it, ok := p.selected(); ok {
				return p.attach(it)
			}
			return nil
		}
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	if _, isKey := msg.(tea.KeyPressMsg); isKey {
		p.cursor = 0
	}
	return cmd
}

// open previews it: a resource is read, a template described.
func (p *resourcesPanel) open(it resourceItem) tea.Cmd {
	p.shown = it
	if it.template != "" {
		p.preview = &resourcePreviewMsg{key: it.label(), text: "resource template " + it.template +
			"\n\n" + it.desc + "\n\nPress a to put @" + it.server + ":" + it.template + " in the input, then fill in its {variables}."}
		return nil
	}
	p.loading = it.label()
	a, ctx, dir := p.m.app, p.m.ctx, p.m.ui.opts.ImageDir
	return func() tea.Msg {
		res, err := a.ReadResource(ctx, it.server, it.uri)
		return resourcePreviewMsg{key: it.label(), text: previewText(res), err: err, images: previewImages(res, dir)}
	}
}

// attach closes the browser and puts its mention in the input.
func (p *resourcesPanel) attach(it resourceItem) tea.Cmd {
	p.done = true
	mention := it.mention()
	if it.template != "" {
		mention = "@" + it.server + ":" + it.template
	}
	p.m.attachMention(mention)
	return nil
}

// previewText renders a read resource for a person: text and JSON as text,
// binary content by type and size.
func previewText(res *sdk.ReadResourceResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		head := c.URI
		if c.MIMEType != "" {
			head += " · " + c.MIMEType
		}
		switch {
		case c.Blob != nil && attach.IsImage(c.MIMEType):
			parts = append(parts, head+"\n[image, "+attach.Size(len(c.Blob))+"]")
		case c.Blob != nil:
			parts = append(parts, head+"\n[binary, "+attach.Size(len(c.Blob))+"]")
		default:
			text := c.Text
			if strings.Contains(c.MIMEType, "json") {
				text = prettyJSON(json.RawMessage(text), 2000)
			}
			parts = append(parts, head+"\n"+text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// previewImages returns the image contents of a read resource, saved under
// dir like a tool result's images.
func previewImages(res *sdk.ReadResourceResult, dir string) []*toolImage {
	if res == nil {
		return nil
	}
	var imgs []*toolImage
	for _, c := range res.Contents {
		if c != nil && c.Blob != nil && attach.IsImage(c.MIMEType) {
			imgs = append(imgs, newToolImage(c.MIMEType, c.Blob, dir))
		}
	}
	return imgs
}

// viewPreviewImage shows a previewed resource's image in the image viewer,
// as /image N shows a tool result's: where the terminal can draw images.
// The image is not part of the conversation, so kitty is sent it first.
func (m *model) viewPreviewImage(img *toolImage) tea.Cmd {
	v, err := m.previewImageViewer(img)
	if err != nil {
		m.notice(itemInfo, err.Error())
		return nil
	}
	return tea.Exec(v, func(err error) tea.Msg { return imageViewedMsg{err} })
}

// previewImageViewer returns the viewer of a previewed resource's image, or
// why this terminal cannot draw it.
func (m *model) previewImageViewer(img *toolImage) (*imageViewer, error) {
	switch {
	case m.imgs.proto == imagesOff:
		return nil, fmt.Errorf("This terminal shows no images (otter shows them in kitty, Ghostty, iTerm2, WezTerm and terminals that speak sixel; OTTER_IMAGES=kitty, iterm2 or sixel forces one). The image: %s", img.label)
	case img.format == "" || img.w*img.h > maxInlinePixels:
		return nil, fmt.Errorf("This image cannot be drawn (only PNG, JPEG and GIF up to %d megapixels are): %s", maxInlinePixels/1_000_000, img.label)
	}
	var transmit string
	if m.imgs.proto == imagesKitty {
		img.id = kittyID(len(m.shown) + 1000) // clear of the conversation's images
		img.cols, img.rows = fitCells(img.w, img.h, max(m.width, 20), max(m.height-3, 3))
		seq, err := kittyTransmit(img.data, img.id, img.cols, img.rows, m.imgs.tmux)
		if err != nil {
			return nil, fmt.Errorf("cannot draw this image: %w", err)
		}
		transmit, img.sent = seq, true
	}
	v := m.imageViewer(img)
	v.title = ansi.Truncate("resource image · "+strings.Trim(img.label, "[]"), max(m.width, 20), "…")
	v.seq = transmit + v.seq
	return v, nil
}

func (p *resourcesPanel) view(width, height int) string {
	st := p.m.st
	if p.preview != nil {
		body := p.preview.text
		if p.preview.err != nil {
			body = st.errText.Render(p.preview.err.Error())
		}
		wrap := lipgloss.NewStyle().Width(max(width-2, 20))
		lines := strings.Split(wrap.Render(body), "\n")
		room := max(height-3, 1)
		p.scroll = min(p.scroll, max(len(lines)-room, 0))
		keys := "↑/↓ scroll · a attach to the next message · esc back"
		if p.direct {
			keys = "↑/↓ scroll · a attach to the next message · esc close"
		}
		if len(p.preview.images) > 0 && p.m.imgs.proto != imagesOff {
			keys = "v shows the image · " + keys
		}
		return st.title.Render(cutMiddle(p.preview.key, width)) + "\n" + clipLines(strings.Join(lines[p.scroll:], "\n"), room, true) +
			"\n\n" + st.dim.Render(keys)
	}
	ms := p.matches()
	p.cursor = min(p.cursor, max(len(ms)-1, 0))
	rowsRoom := max(height-4, 1)
	start := max(p.cursor-rowsRoom+1, 0)
	end := min(len(ms), start+rowsRoom)
	var b strings.Builder
	b.WriteString(st.title.Render("Resources") + st.dim.Render(fmt.Sprintf("  %d shown", len(ms))) + "\n")
	p.filter.SetWidth(max(width-lipgloss.Width(p.filter.Prompt)-2, 10))
	b.WriteString(p.filter.View() + "\n")
	for i := start; i < end; i++ {
		it := ms[i]
		name := cutMiddle(it.label(), width-2) // a URI's end tells it from its neighbours
		mark := "  "
		if i == p.cursor {
			mark = st.accent.Render("› ")
			name = st.accent.Bold(true).Render(name)
		}
		line := mark + name
		extra := strings.TrimSpace(strings.Join([]string{it.mime, it.name}, "  "))
		if it.template != "" {
			extra = "template  " + extra
		}
		if room := width - lipgloss.Width(line) - 3; room > 8 && extra != "" {
			line += "  " + st.dim.Render(ansi.Truncate(extra, room, "…"))
		}
		b.WriteString(line + "\n")
	}
	if len(ms) == 0 {
		b.WriteString(st.dim.Render("  no resource matches") + "\n")
	}
	status := ""
	if p.loading != "" {
		status = st.dim.Render("reading "+p.loading+"…") + "\n"
	}
	keys := wrapKeys("type to filter · ↑/↓ select · enter preview · tab attach · esc close", width)
	body := clipLines(strings.TrimRight(b.String(), "\n"), max(height-1-lipgloss.Height(keys), 1), true)
	return body + "\n" + status + "\n" + st.dim.Render(keys)
}

// mcpOffers opens /mcp resources or answers /mcp prompts.
func (m *model) mcpOffers(what, server string) tea.Cmd {
	m.refresh()
	i := slices.IndexFunc(m.servers, func(s app.ServerStatus) bool { return s.Name == server })
	if server != "" && i < 0 {
		m.notice(itemError, fmt.Sprintf("no MCP server is named %q; /mcp %s alone lists every server's", server, what))
		return nil
	}
	if server != "" && m.servers[i].State == app.StateIdle {
		// It has not started yet: its resources and prompts are known once
		// it runs. The list opens when it has started.
		m.notice(itemInfo, fmt.Sprintf("starting %s to list its %s…", server, what))
		a, ctx := m.app, m.ctx
		return func() tea.Msg { return serverWokenMsg{what: what, server: server, err: a.WakeServer(ctx, server)} }
	}
	if what == "prompts" {
		m.panel = newPromptsPanel(m, server) // prompts.go
		return nil
	}
	m.panel = newResourcesPanel(m, server)
	return nil
}

// serverWokenMsg is the end of starting an idle server to list its
// resources or prompts.
type serverWokenMsg struct {
	what, server string
	err          error
}

// attachMention adds a mention to the input, for the next message.
func (m *model) attachMention(mention string) {
	v := m.input.Value()
	if v != "" && !strings.HasSuffix(v, " ") && !strings.HasSuffix(v, "\n") {
		v += " "
	}
	m.input.SetValue(v + mention + " ")
	m.input.Focus()
}

// attachedChips notes, one compact line each, the resources attached to
// the message just sent.
func (m *model) attachedChips(items []string) {
	for _, it := range items {
		m.notice(itemInfo, "⎘ "+it)
	}
}

// chatPrompt sends a server's prompt, its messages whole.
func (m *model) chatPrompt(msg promptReadyMsg) tea.Cmd {
	conv := m.conv
	return m.chatWith(msg.text, func(ctx context.Context, emit func(app.Event)) error {
		return conv.SendPrompt(ctx, msg.server, msg.res, emit)
	})
}

// promptSummary is what the transcript shows of a prompt sent whole: its
// command and arguments, then its text.
func promptSummary(p app.Prompt, vals map[string]string, parts []string) string {
	line := promptCommand(p)
	for _, a := range p.Arguments {
		if v := vals[a.Name]; v != "" {
			line += " " + a.Name + "=" + quoteWord(v)
		}
	}
	if len(parts) == 0 {
		return line
	}
	return line + "\n" + strings.Join(parts, "\n\n")
}

// mentionCandidates completes an @SERVER:URI being typed at the end of v:
// base is v up to the @, cands every resource (and template) as a mention.
// In a template's {variable} (typed or still literal), it asks the server
// for the variable's values instead: ask then reads them, and the Tab that
// they answer (gotTemplateValues) finds them in m.varValues.
func (m *model) mentionCandidates(v string) (base string, cands []string, ok bool, ask tea.Cmd) {
	i := strings.LastIndexAny(v, " \n\t")
	word := v[i+1:]
	if !strings.HasPrefix(word, "@") {
		return "", nil, false, nil
	}
	files := m.fileCandidates(word) // project.go: @path
	vv := m.varValues
	if vv != nil && vv.input == v && !vv.failed {
		return vv.base, vv.cands, true, nil
	}
	cycling := m.cycle != nil && m.cycle.value == v
	canComplete := vv == nil || vv.input != v // not again after the server failed
	for _, it := range resourceItems(m.app, "") {
		if it.template == "" {
			cands = append(cands, it.mention())
			continue
		}
		cands = append(cands, "@"+it.server+":"+it.template)
		if canComplete && !cycling && ask == nil {
			ask = m.askTemplateVar(v, v[:i+1], word, it)
		}
	}
	if ask != nil {
		return "", nil, false, ask
	}
	return v[:i+1], append(cands, files...), true, nil
}

// templateSpot finds where in a URI template a mention typed after its
// "@server:" stands: at the first variable still written as "{name}",
// else at the variable whose value is being typed (the last one reached).
// head is the typed text before that variable, value what stands for it,
// suffix the typed text after it, and resolved the values of the
// variables before it, which a server's completion may use. ok is false
// when typed does not follow the template.
func templateSpot(tmpl, typed string) (head, name, value, suffix string, resolved map[string]string, ok bool) {
	resolved = map[string]string{}
	pos := 0 // in typed
	for {
		open := strings.Index(tmpl, "{")
		end := strings.Index(tmpl, "}")
		if open < 0 || end < open {
			return "", "", "", "", nil, false
		}
		lit, v, rest := tmpl[:open], tmpl[open+1:end], tmpl[end+1:]
		if !strings.HasPrefix(typed[pos:], lit) {
			return "", "", "", "", nil, false
		}
		pos += len(lit)
		name = strings.Trim(v, "+#./;?&*")
		after := typed[pos:]
		if literal := "{" + v + "}"; strings.HasPrefix(after, literal) {
			return typed[:pos], name, "", after[len(literal):], resolved, true
		}
		next := rest
		if i := strings.Index(rest, "{"); i >= 0 {
			next = rest[:i]
		}
		i := len(after) // the value runs to the end of what is typed
		if next != "" {
			if j := strings.Index(after, next); j >= 0 {
				i = j
			}
		}
		value = after[:i]
		if strings.ContainsAny(value, "{}/") {
			return "", "", "", "", nil, false
		}
		if i == len(after) { // typing this value: the template goes on after it
			return typed[:pos], name, value, rest, resolved, true
		}
		if !strings.Contains(rest, "{") { // the last variable, with what follows it typed
			return typed[:pos], name, value, after[i:], resolved, true
		}
		resolved[name] = value
		pos += i
		tmpl = rest
	}
}

// varValuesCache is what the server offered for a template's variable, for
// the input it was asked for.
type varValuesCache struct {
	input, base string
	cands       []string
	failed      bool // the server gave none: Tab offers the templates
}

// templateValuesMsg carries a server's values for a template variable.
type templateValuesMsg struct {
	input, base, head, suffix string
	server, name              string // the variable's
	literal                   bool   // the input holds it as "{name}"
	values                    []string
	err                       error
}

// askTemplateVar asks cb for the values of the variable that word, a
// mention of the template, stands at (see templateSpot): the first still
// literal, else the one being typed, with the values before it; nil when
// word is not a mention of it.
func (m *model) askTemplateVar(v, base, word string, it resourceItem) tea.Cmd {
	mention := "@" + it.server + ":"
	if !strings.HasPrefix(word, mention) {
		return nil
	}
	head, name, value, suffix, resolved, ok := templateSpot(it.template, word[len(mention):])
	if !ok {
		return nil
	}
	literal := strings.HasPrefix(word[len(mention)+len(head):], "{")
	head = mention + head
	a, ctx := m.app, m.ctx
	return func() tea.Msg {
		vals, err := a.Complete(ctx, it.server, "ref/resource", it.template, name, value, resolved)
		return templateValuesMsg{input: v, base: base, head: head, suffix: suffix, server: it.server, name: name, literal: literal, values: vals, err: err}
	}
}

// gotTemplateValues offers a server's values for a template variable as
// Tab's candidates, when the input is still what they were asked for.
func (m *model) gotTemplateValues(msg templateValuesMsg) tea.Cmd {
	if m.input.Value() != msg.input {
		return nil
	}
	if msg.err != nil || len(msg.values) == 0 {
		// None (server-everything offers a resourceId only once one is
		// typed). A variable still written as {name} is the person's to
		// type: Tab moves into it — the placeholder goes and the cursor
		// stands where the value goes. For a value being typed, Tab offers
		// the templates, and the typed text stays.
		slog.Debug("completing a resource template variable", "err", msg.err)
		if msg.literal {
			before := msg.base + msg.head
			m.input.SetValue(before + msg.suffix)
			m.input.SetCursorColumn(utf8.RuneCountInString(before[strings.LastIndex(before, "\n")+1:]))
			m.cycle = nil
			m.hint = fmt.Sprintf("type the %s here (%s offers no values for it)", msg.name, msg.server)
			if strings.Contains(msg.suffix, "{") {
				m.hint += ", then tab goes on to the next {variable}"
			}
			return nil
		}
		m.varValues = &varValuesCache{input: msg.input, failed: true}
		defer func() { m.varValues = nil }()
		return m.complete()
	}
	cands := make([]string, len(msg.values))
	for i, v := range msg.values {
		cands[i] = msg.head + v + msg.suffix
	}
	word := strings.TrimPrefix(msg.input, msg.base)
	if strings.Contains(word, "{") {
		// The variable is still literal: every value is a candidate.
		msg.input = msg.base + msg.head
		m.input.SetValue(msg.input)
	}
	m.varValues = &varValuesCache{input: msg.input, base: msg.base, cands: cands}
	defer func() { m.varValues = nil }()
	return m.complete()
}

// completeArg has the server complete prompt p's argument arg in the
// form's input in (completion/complete), with the values others gives of
// the other arguments as its context: its values show as suggestions
// while typing, ctrl+e takes one. The lookup runs off the UI goroutine, so
// it reads the fields through their locked copies (acc).
func (m *model) completeArg(in *huh.Input, p app.Prompt, arg string, acc *lockedValue, others func(arg string) map[string]string) {
	a, ctx := m.app, m.ctx
	in.SuggestionsFunc(func() []string {
		vals, err := a.Complete(ctx, p.Server, "ref/prompt", p.Name, arg, acc.Get(), others(arg))
		if err != nil {
			slog.Debug("completing a prompt argument", "server", p.Server, "prompt", p.Name, "arg", arg, "err", err)
		}
		return vals
	}, acc.plain)
}

// lockedValue is a huh accessor that a goroutine may read.
type lockedValue struct {
	mu    sync.Mutex
	plain *string
	v     string
}

func (l *lockedValue) Get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.v
}

func (l *lockedValue) Set(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.v, *l.plain = s, s
}

// resourceChanged notes in the transcript that a resource attached to a
// message (and so subscribed to) changed on its server: what the model
// read is no longer current.
func resourceChanged(ev app.ResourceUpdated) noticeMsg {
	return noticeMsg{kind: itemInfo, text: "⟳ @" + ev.Server + ":" + ev.URI + " changed on the server since it was attached; attach it again to send the new contents"}
}

// noteLinks keeps the resource links of a finished tool call's result for
// /open, and says so under the result. A link belongs to the server whose
// tool returned it, or else to the server that lists its URI.
func (m *model) noteLinks(it *toolItem, res *tool.Result) {
	if res == nil {
		return
	}
	server := ""
	if i := slices.IndexFunc(m.tools, func(e tool.Entry) bool { return e.Name == it.name }); i >= 0 {
		server = m.tools[i].Info.Server
	}
	var links []resourceItem
	for _, c := range res.Content {
		l, ok := c.(*sdk.ResourceLink)
		if !ok {
			continue
		}
		owner := server
		if owner == "" {
			for _, r := range m.app.Resources() {
				if r.URI == l.URI {
					owner = r.Server
				}
			}
		}
		links = append(links, resourceItem{server: owner, uri: l.URI, name: cmp.Or(l.Title, l.Name), mime: l.MIMEType, desc: l.Description})
	}
	if len(links) == 0 {
		return
	}
	m.links = links
	hint := "/open previews the resource link"
	if len(links) > 1 {
		hint = fmt.Sprintf("/open 1…%d previews a resource link", len(links))
	}
	it.result += "\n(" + hint + ")"
}

// openLink is /open [N]: the preview of the resource browser for the Nth
// resource link (the first by default) of the last tool result with links.
func (m *model) openLink(arg string) tea.Cmd {
	if len(m.links) == 0 {
		m.notice(itemError, "no tool result has a resource link to open yet")
		return nil
	}
	n := 1
	if arg = strings.TrimSpace(arg); arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 || v > len(m.links) {
			m.notice(itemError, fmt.Sprintf("/open takes the number of a resource link of the last result, 1 to %d; %q is not one", len(m.links), arg))
			return nil
		}
		n = v
	}
	link := m.links[n-1]
	if link.server == "" {
		m.notice(itemError, fmt.Sprintf("no connected server is known to hold %s, so otter cannot read it", link.uri))
		return nil
	}
	p := newResourcesPanel(m, link.server)
	p.direct = true
	m.panel = p
	return p.open(link)
}
