package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/otter-sh/otter/internal/agent"
	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/tool"
)

// frameInterval throttles re-rendering of streaming text.
const frameInterval = 40 * time.Millisecond

// wheelLines is how far one notch of the mouse wheel scrolls.
const wheelLines = 3

// maxInputLines is the most lines the input grows to before it scrolls.
const maxInputLines = 6

type (
	refreshMsg  struct{}
	frameMsg    struct{}
	reloadedMsg struct {
		diff app.ReloadDiff
		err  error
		auto bool
	}
	chatEventMsg struct {
		turn int
		ev   agent.Event
	}
	turnDoneMsg struct {
		turn int
		err  error
	}
	noticeMsg struct {
		kind noticeKind
		text string
	}
	callDoneMsg struct {
		it      *toolItem
		res     *tool.Result
		err     error
		elapsed time.Duration
	}
	openPanelMsg struct{ p modal }
	// snapshotMsg asks for the current screen as plain text (tests).
	snapshotMsg struct{ ch chan<- string }
)

type activeQuestion struct {
	q  *question
	md modal
}

// model is the Bubble Tea model of the whole screen.
type model struct {
	ui   *UI
	conv *app.Conversation // the conversation shown
	app  *app.App          // conv's App: servers, tools, configuration
	ctx  context.Context   // cancelled when the UI quits
	stop context.CancelFunc
	// endProgram ends the running program at once (see UI.Run); nil when
	// the model runs in a test's program, which tea.Quit ends.
	endProgram context.CancelFunc

	width, height int
	st            styles
	input         textarea.Model
	spin          spinner.Model
	tr            transcript

	history []string
	histPos int
	draft   string

	provider  Provider
	servers   []app.ServerStatus
	tools     []tool.Entry
	offer     agent.ToolOffer // which tools are deferred
	prompts   []app.Prompt
	links     []resourceItem  // the resource links of the last tool result that had any: /open N
	varValues *varValuesCache // a server's values for a template variable, while Tab offers them

	busy   bool
	pastes []paste // long pastes in the input, shown by placeholder
	// collapsed maps a message sent with long pastes to how the transcript
	// shows it: with the placeholders (ctrl+o shows it whole).
	collapsed  map[string]string
	turn       int
	cancelTurn context.CancelFunc
	streaming  *assistantItem
	thinking   *thinkingItem // the thinking still arriving (thinking.go)
	retry      *noticeItem   // the turn's retry notice, updated in place
	turnText   bool          // the current turn streamed text
	turnInput  string        // the current turn's message as typed, given back if it was not sent
	toolItems  map[string]*toolItem
	calls      int // running /call calls
	callSeq    int
	ctxLine    string // the status bar's window share and cost (context.go)
	frameDue   bool
	spinning   bool

	imgs  imageSupport // how this terminal shows images
	shown []*toolImage // the images of this conversation, for /image N

	questions []*activeQuestion
	panel     modal
	hint      string
	cycle     *completion // Tab's candidates, while Tab cycles through them
	ctrlC     bool
	mouse     bool // mouse reporting on: the wheel scrolls (ctrl+s toggles)
	// waiting: the first message waits for servers still starting
	// (app.WaitingForServers); esc sends it at once.
	waiting bool

	// loginSaid names the needs-auth servers the transcript has told about
	// (until they connect); loginNew those still to tell about, in one
	// notice once no server is pending.
	loginSaid map[string]bool
	loginNew  []string
	welcomed  bool      // the welcome is in the transcript; notices may follow
	typedAt   time.Time // the last key that went into the input
	// now is the clock typedAt is read by (time.Now; tests type a
	// sentence with a clock that waits for them, however loaded the
	// machine).
	now func() time.Time
	// updated, when set (tests), hears of every update but a snapshot's:
	// the screen may have changed, so a test waiting for it looks again
	// instead of drawing it over and over.
	updated func()
	ctrlCs  int // ctrl+c presses, to match ctrlCExpiredMsg
	// clearAfterTurn: /clear came while a turn ran; the core forgets the
	// conversation when that turn has ended.
	clearAfterTurn bool
	// inputRow is the screen row of the input's first line, as render
	// last drew it: where View puts the terminal's cursor.
	inputRow int
}

func newModel(u *UI, conv *app.Conversation) *model {
	ctx, stop := context.WithCancel(context.Background())
	m := &model{
		ui: u, conv: conv, app: conv.App(), ctx: ctx, stop: stop,
		width: 80, height: 24,
		st:        newStyles(true),
		spin:      spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		toolItems: map[string]*toolItem{},
		imgs:      detectImages(u.opts.lookupEnv()),
		loginSaid: map[string]bool{},
		mouse:     true,
		collapsed: map[string]string{},
		now:       time.Now,
	}
	m.input = textarea.New()
	m.input.Placeholder = placeholders[0]
	m.input.ShowLineNumbers = false
	m.input.Prompt = "› "
	// "›" on the first row only: later rows of a message indent under it,
	// as they do in the transcript.
	m.input.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	m.input.CharLimit = 0
	// As high as its wrapped lines, up to maxInputLines; past that it
	// scrolls. No limit on what it holds (MaxContentHeight 0 would block
	// typing at MaxHeight lines).
	m.input.DynamicHeight = true
	m.input.MinHeight = 1
	m.input.MaxHeight = maxInputLines
	m.input.MaxContentHeight = math.MaxInt32
	m.input.KeyMap.InsertNewline.SetKeys("shift+enter", "alt+enter", "ctrl+j")
	m.input.SetStyles(textarea.DefaultStyles(true))
	m.input.SetVirtualCursor(false) // View shows the terminal's cursor
	m.input.Focus()
	m.tr.width = m.width
	m.history = loadHistory(u.opts.HistoryFile)
	m.histPos = len(m.history)
	welcome := "otter"
	if u.opts.Version != "" {
		welcome += " " + u.opts.Version
	}
	welcome += " — type a message, or /help. /mcp shows your MCP servers."
	m.notice(itemInfo, welcome)
	// After the welcome: a server that already failed to start says so
	// below it, as a notice in the transcript, like those that fail later.
	m.refresh()
	m.resume() // session.go: a continued conversation's messages
	if u.opts.PickSession {
		m.openSessionPicker() // picker.go
	}
	if m.provider.Help != "" {
		m.notice(itemInfo, "No model provider is configured: /mcp and /call work; chat needs a provider (type anything to see how).")
	}
	m.showConfigWarnings()
	m.welcomed = true
	if !slices.ContainsFunc(m.servers, func(s app.ServerStatus) bool { return s.State == app.StatePending }) {
		m.announceLogins()
	}
	if req := trustRequest(m.app); req != nil {
		m.questions = append(m.questions, &activeQuestion{md: newTrustModal(m, req, false)})
	}
	m.layout()
	return m
}

func (m *model) Init() tea.Cmd {
	m.ui.clock.start()
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.imgs.askSixel {
		cmds = append(cmds, tea.Raw(ansi.RequestPrimaryDeviceAttributes))
	}
	if len(m.questions) > 0 {
		if fm, ok := m.questions[0].md.(initer); ok {
			cmds = append(cmds, fm.init())
		}
	}
	if p := m.ui.opts.Prompt; p != "" {
		cmds = append(cmds, func() tea.Msg { return initialPromptMsg{p} })
	}
	return tea.Batch(cmds...)
}

func (m *model) refresh() {
	m.provider = providerOf(m.app)
	prev := make(map[string]app.ServerState, len(m.servers))
	for _, s := range m.servers {
		prev[s.Name] = s.State
	}
	m.servers = m.app.Servers()
	// Say so in the transcript when a login finished or a working server
	// broke; other changes show in /mcp and the status bar.
	pending := false
	for _, s := range m.servers {
		switch was := prev[s.Name]; {
		case was == app.StateNeedsAuth && s.State == app.StateConnected:
			m.notice(itemInfo, fmt.Sprintf("%s is authorized and connected (%s)", s.Name, countOf(s.Tools, "tool")))
		case was != app.StateFailed && s.State == app.StateFailed && s.Attempts > 0:
			// It lost its connection and gave up reconnecting (the core
			// says how many times, and names no command).
			m.notice(itemError, fmt.Sprintf("%s failed: %s — open /mcp, select it and press r to retry", s.Name, s.Error))
		case was == app.StateConnected && s.State == app.StateFailed:
			m.notice(itemError, fmt.Sprintf("%s failed: %s — /mcp for details", s.Name, s.Error))
		case (was == "" || was == app.StatePending) && s.State == app.StateFailed:
			m.notice(itemError, fmt.Sprintf("%s could not start: %s — /mcp for details", s.Name, s.Error))
		case was == app.StateConnected && s.State == app.StateNeedsAuth:
			m.notice(itemError, fmt.Sprintf("%s needs a new login: %s — open /mcp, select it and press l", s.Name, s.Error))
			m.loginSaid[s.Name] = true
		case s.State == app.StateNeedsAuth && !m.loginSaid[s.Name]:
			m.loginSaid[s.Name] = true
			m.loginNew = append(m.loginNew, s.Name)
		}
		switch s.State {
		case app.StatePending:
			pending = true
		case app.StateConnected:
			delete(m.loginSaid, s.Name)
		}
	}
	if len(m.loginNew) > 0 && !pending && m.welcomed {
		m.announceLogins()
	}
	m.tools = m.app.ToolEntries()
	m.offer = m.conv.ToolOffer()
	m.prompts = m.app.Prompts()
}

// announceLogins says, in one notice, which servers wait for a login.
// otter never starts a login on its own at startup (that would open a
// browser per server); the person starts it from /mcp.
func (m *model) announceLogins() {
	var names []string
	for _, n := range m.loginNew { // skip those that left needs-auth meanwhile
		for _, s := range m.servers {
			if s.Name == n && s.State == app.StateNeedsAuth {
				names = append(names, n)
			}
		}
	}
	m.loginNew = nil
	switch len(names) {
	case 0:
	case 1:
		m.notice(itemInfo, fmt.Sprintf("%s needs login — open /mcp, select it and press l", names[0]))
	default:
		m.notice(itemInfo, fmt.Sprintf("%d servers need login (%s) — open /mcp and press l on each", len(names), strings.Join(names, ", ")))
	}
}

// countOf is n and the noun, with an s unless n is 1 ("1 line", "3 lines").
func countOf(n int, noun string) string {
	s := fmt.Sprintf("%d %s", n, noun)
	if n != 1 {
		s += "s"
	}
	return s
}

func (m *model) notice(kind noticeKind, text string) *noticeItem {
	it := &noticeItem{kind: kind, text: text}
	m.tr.add(it)
	return it
}

// noticeCmd adds a notice at once, where a tea.Cmd is returned (a modal's
// answer): a command would deliver it after whatever the answer set off,
// such as the result of the tool that asked, and the transcript would tell
// the story backwards. Call it from Update only.
func (m *model) noticeCmd(kind noticeKind, text string) tea.Cmd {
	m.notice(kind, text)
	return nil
}

// callNoticeCmd is noticeCmd for what the person answered to server's
// request: while one of server's tool calls runs (it asked during the call),
// the notice goes into that call's block, before its result, so the
// transcript tells the story in order.
func (m *model) callNoticeCmd(server string, kind noticeKind, text string) tea.Cmd {
	for i := len(m.tr.items) - 1; i >= 0; i-- {
		if it, ok := m.tr.items[i].(*toolItem); ok && !it.finished() && m.toolServer(it.name) == server {
			it.note(kind, text)
			return nil
		}
	}
	return m.noticeCmd(kind, text)
}

// toolServer returns the server of the tool named name, or "".
func (m *model) toolServer(name string) string {
	for _, e := range m.tools {
		if e.Name == name {
			return e.Info.Server
		}
	}
	return ""
}

// placeholders are the empty input's hint, longest first: the widest
// that fits is shown, so a narrow terminal never cuts one mid-word.
var placeholders = []string{
	"Ask otter… (/help for commands, shift+enter for a new line)",
	"Ask otter… (/help for commands)",
	"Ask otter…",
}

// layout sizes the input to its content and the terminal.
func (m *model) layout() {
	m.input.SetWidth(max(m.width-1, 10))
	room := m.input.Width() - 1 // the cursor's cell
	m.input.Placeholder = placeholders[len(placeholders)-1]
	for _, p := range placeholders {
		if ansi.StringWidth(p) <= room {
			m.input.Placeholder = p
			break
		}
	}
	if m.tr.width != m.width {
		m.tr.width = m.width
		m.tr.invalidate()
	}
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	m.layout()
	if _, snap := msg.(snapshotMsg); m.updated != nil && !snap {
		m.updated()
	}
	return m, cmd
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.imageMsg(msg); ok {
		return cmd
	}
	if cmd, ok := m.contextMsg(msg); ok {
		return cmd
	}
	if cmd, ok := m.projectMsg(msg); ok { // project.go
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		cmds := []tea.Cmd{m.resizeImages()}
		if top := m.focus(); top != nil {
			cmds = append(cmds, top.update(msg))
		}
		return tea.Batch(cmds...)

	case tea.BackgroundColorMsg:
		dark := msg.IsDark()
		if dark != m.st.dark {
			m.st = newStyles(dark)
			m.input.SetStyles(textarea.DefaultStyles(dark))
			m.tr.invalidate()
		}
		return nil

	case snapshotMsg:
		msg.ch <- ansi.Strip(m.render())
		return nil

	case refreshMsg:
		m.refresh()
		return nil

	case frameMsg:
		m.frameDue = false
		if it := m.streaming; it != nil {
			it.show()
		}
		return nil

	case spinner.TickMsg:
		if !m.busy && m.calls == 0 {
			m.spinning = false
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd

	case noticeMsg:
		m.notice(msg.kind, msg.text)
		return nil

	case templateValuesMsg:
		return m.gotTemplateValues(msg)

	case registryAddedMsg:
		m.registryAdded(msg) // registry.go
		return nil

	case serverWokenMsg:
		if msg.err != nil {
			m.refresh()
			m.notice(itemError, fmt.Sprintf("%s did not start: %v — /mcp for details", msg.server, msg.err))
			return nil
		}
		return m.mcpOffers(msg.what, msg.server)

	case reloadedMsg:
		was := m.provider
		m.refresh()
		m.showReload(msg, was)
		if msg.err == nil {
			m.showConfigWarnings()
		}
		return nil

	case chatEventMsg:
		if msg.turn == m.turn || msg.turn == -1 { // -1: progress of a /call
			return m.chatEvent(msg.ev)
		}
		return nil

	case ctrlCExpiredMsg:
		if m.ctrlC && msg.n == m.ctrlCs {
			m.ctrlC = false
			if m.hint == "press ctrl+c again to quit" {
				m.hint = ""
			}
		}
		return nil

	case turnDoneMsg:
		if msg.turn == m.turn {
			m.endTurn(msg.err)
			if m.clearAfterTurn {
				m.clearAfterTurn = false
				m.resetChat()
			}
			return m.sendQueued()
		}
		return nil

	case callDoneMsg:
		m.calls--
		return m.finishTool(msg.it, msg.res, msg.err, msg.elapsed)

	case permissionRemovedMsg:
		m.permissionRemoved(msg)
		return nil

	case usePromptMsg:
		return m.promptCommand(msg.p, "")

	case callRequestMsg:
		return m.callCommand(msg.name)

	case promptReadyMsg:
		return m.chatPrompt(msg)

	case openPanelMsg:
		m.panel = msg.p
		if fm, ok := msg.p.(initer); ok {
			return fm.init()
		}
		return nil

	case questionMsg:
		aq := &activeQuestion{q: msg.q}
		if msg.q.ctx.Err() != nil {
			msg.q.cancel()
			return nil
		}
		aq.md = msg.q.build(m)
		m.questions = append(m.questions, aq)
		if len(m.questions) == 1 {
			if fm, ok := aq.md.(initer); ok {
				return fm.init()
			}
		}
		return nil

	case dismissMsg:
		for i, aq := range m.questions {
			if aq.q != nil && aq.q.id == msg.id {
				m.questions = append(m.questions[:i], m.questions[i+1:]...)
				return m.startQuestion(i == 0)
			}
		}
		return nil

	case tea.KeyPressMsg:
		return m.key(msg)

	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			m.scrollUp(wheelLines)
		case tea.MouseWheelDown:
			m.scrollDown(wheelLines)
		}
		return nil

	case tea.PasteMsg:
		if top := m.focus(); top != nil {
			return top.update(msg)
		}
		return m.pasteLong(msg)
	}

	// Anything else belongs to the focused component (huh's internal
	// messages, cursor blinks).
	if top := m.focus(); top != nil {
		cmd := top.update(msg)
		return tea.Batch(cmd, m.afterFocus())
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// focus returns the component that receives keys: the oldest question,
// else the open panel.
func (m *model) focus() modal {
	if len(m.questions) > 0 {
		return m.questions[0].md
	}
	return m.panel
}

// afterFocus drops finished questions and panels and starts the next one.
func (m *model) afterFocus() tea.Cmd {
	if len(m.questions) > 0 && m.questions[0].md.finished() {
		m.questions = m.questions[1:]
		return m.startQuestion(true)
	}
	if len(m.questions) == 0 && m.panel != nil && m.panel.finished() {
		if tp, ok := m.panel.(*toolsPanel); ok && tp.back != nil {
			m.panel = tp.back // esc in /mcp's tool list goes back to /mcp
		} else {
			m.panel = nil
		}
	}
	return nil
}

func (m *model) startQuestion(front bool) tea.Cmd {
	if !front || len(m.questions) == 0 {
		return nil
	}
	if fm, ok := m.questions[0].md.(initer); ok {
		return fm.init()
	}
	return nil
}

func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		if m.ctrlC {
			return m.quit()
		}
		m.ctrlC = true
		m.ctrlCs++
		if m.busy || m.calls > 0 {
			m.conv.ClearQueue() // what was queued is not sent: ctrl+c stops it all
			m.cancel()
		}
		m.hint = "press ctrl+c again to quit"
		n := m.ctrlCs
		return tea.Tick(ctrlCWindow, func(time.Time) tea.Msg { return ctrlCExpiredMsg{n} })
	}
	if m.ctrlC {
		m.ctrlC = false
		m.hint = ""
	}

	if top := m.focus(); top != nil && !m.typingThrough(k) {
		cmd := top.update(k)
		return tea.Batch(cmd, m.afterFocus())
	}

	switch k.String() {
	case "esc":
		if m.waiting { // the first message goes now, without the servers still starting
			m.conv.SendNow()
			m.waiting, m.hint = false, ""
			return nil
		}
		if m.conv.ClearQueue() > 0 { // first the queue, then the turn
			m.hint = queueClearedHint
			return nil
		}
		if m.busy || m.calls > 0 {
			m.cancel()
			return nil
		}
		m.hint = ""
		return nil
	case "enter":
		return m.submit()
	case "tab":
		return m.complete()
	case "right":
		// → at the end of a candidate Tab cycled to keeps it: the next
		// Tab completes from there (a template's next {variable}).
		if c := m.cycle; c != nil && c.value == m.input.Value() && c.i >= 0 {
			m.cycle, m.hint = nil, ""
			return nil
		}
	case "pgup":
		m.scrollUp(max(m.mainHeight()/2, 1))
		return nil
	case "pgdown":
		m.scrollDown(max(m.mainHeight()/2, 1))
		return nil
	case "ctrl+home":
		m.scrollTop()
		return nil
	case "ctrl+end":
		m.follow()
		return nil
	case "home", "end":
		if m.input.Value() == "" { // with text, they move in the line
			if k.String() == "home" {
				m.scrollTop()
			} else {
				m.follow()
			}
			return nil
		}
	case "ctrl+s":
		m.mouse = !m.mouse
		if m.mouse {
			m.hint = "mouse on: the wheel scrolls; shift+drag selects text (option+drag in iTerm2) · ctrl+s turns it off"
		} else {
			m.hint = "mouse off: drag selects text; pgup/pgdown scroll · ctrl+s turns the wheel back on"
		}
		return nil
	case "ctrl+o":
		m.tr.expand = !m.tr.expand
		m.tr.invalidate()
		return nil
	case "ctrl+y":
		return m.viewImage(0)
	case "up":
		if m.unqueue() {
			return nil
		}
		if m.input.Line() == 0 && m.histPos > 0 {
			if m.histPos == len(m.history) {
				m.draft = m.input.Value()
			}
			m.histPos--
			m.input.SetValue(m.history[m.histPos])
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.histPos < len(m.history) {
			m.histPos++
			if m.histPos == len(m.history) {
				m.input.SetValue(m.draft)
			} else {
				m.input.SetValue(m.history[m.histPos])
			}
			return nil
		}
	}
	m.hint = ""
	var cmd tea.Cmd
	before := m.input.Value()
	m.input, cmd = m.input.Update(k)
	if m.input.Value() != before {
		// Tab's cycle belongs to the input it left: typed back to the
		// same text later, the next Tab lists the candidates again
		// rather than jumping to the first of an old list.
		m.cycle = nil
	}
	m.typedAt = m.now()
	return cmd
}

// typingPause is how long the person must stop typing before a question
// that appeared meanwhile takes their keys.
const typingPause = 800 * time.Millisecond

// ctrlCWindow is how long the second ctrl+c that quits may wait.
const ctrlCWindow = 3 * time.Second

// ctrlCExpiredMsg ends the window of the nth ctrl+c.
type ctrlCExpiredMsg struct{ n int }

// typingThrough reports whether k goes on into the message being typed
// although a question (a permission, a form) is in front: the input holds
// text, the person typed within typingPause, and k is text, a space,
// backspace or Enter. A question that pops up mid-sentence must not take
// the rest of the sentence, nor approve a tool call with its Enter; that
// Enter queues the message instead.
func (m *model) typingThrough(k tea.KeyPressMsg) bool {
	if len(m.questions) == 0 || m.input.Value() == "" || m.now().Sub(m.typedAt) > typingPause {
		return false
	}
	switch k.String() {
	case "enter", "space", "backspace":
		return true
	}
	return k.Text != "" && k.Mod&^tea.ModShift == 0
}

// cancel stops the running generation and /call calls (Esc).
func (m *model) cancel() {
	if m.cancelTurn != nil {
		m.cancelTurn()
	}
	for _, it := range m.toolItems {
		if it.cancel != nil && it.state == toolRunning {
			it.cancel()
		}
	}
}

func (m *model) quit() tea.Cmd {
	m.cancel()
	for _, aq := range m.questions {
		if aq.q != nil {
			aq.q.cancel()
		}
	}
	m.questions = nil
	m.stop()
	m.conv.End(context.Background(), "prompt_input_exit")
	if m.endProgram != nil {
		m.endProgram()
	}
	return tea.Quit
}

func (m *model) submit() tea.Cmd {
	short := strings.TrimSpace(m.input.Value())
	if short == "" {
		return nil
	}
	text := strings.TrimSpace(m.expandPastes(short))
	if text != short {
		m.collapsed[text] = short
	}
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
		appendHistory(m.ui.opts.HistoryFile, m.history)
	}
	m.histPos = len(m.history)
	m.draft = ""
	m.input.Reset()
	m.hint, m.cycle = "", nil // Tab's candidates belong to the line just sent
	m.follow()
	if strings.HasPrefix(text, "/") {
		return m.command(text)
	}
	if line, ok := strings.CutPrefix(text, "!"); ok {
		return m.shellLine(line) // project.go
	}
	return m.chat(text)
}

// chat sends a user message to the agent.
func (m *model) chat(text string) tea.Cmd {
	return m.chatWith(text, nil)
}

// chatWith is chat with send instead of the conversation's SendShown (nil:
// SendShown).
func (m *model) chatWith(text string, send func(ctx context.Context, emit func(app.Event)) error) tea.Cmd {
	if m.busy && send != nil {
		m.notice(itemError, "otter is still answering; use the prompt again once it is done")
		return nil
	}
	if m.busy {
		m.enqueue(text)
		return nil
	}
	short := m.collapsed[text]
	m.tr.add(&userItem{text: text, short: short})
	delete(m.collapsed, text)
	if m.provider.Help != "" {
		m.notice(itemInfo, m.provider.Help)
		return nil
	}
	if send == nil {
		conv := m.conv
		// The session keeps how the message was shown (its long pastes as
		// placeholders), so that resuming shows it so.
		send = func(ctx context.Context, emit func(app.Event)) error { return conv.SendShown(ctx, text, short, emit) }
	}
	cmd := m.startTurn(send)
	m.turnInput = text
	return cmd
}

// startTurn runs work as the agent's turn (a message, a prompt, /compact):
// the UI is busy, the spinner turns, Esc cancels work's context, and
// messages typed meanwhile are queued until it ends.
func (m *model) startTurn(work func(ctx context.Context, emit func(app.Event)) error) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.turn++
	m.busy, m.cancelTurn, m.turnText, m.turnInput = true, cancel, false, ""
	turn, ui := m.turn, m.ui
	emit := func(ev app.Event) { ui.send(chatEventMsg{turn, ev}) }
	run := func() tea.Msg {
		defer cancel()
		err := work(ctx, emit)
		return turnDoneMsg{turn, err}
	}
	return tea.Batch(run, m.startSpinner())
}

func (m *model) startSpinner() tea.Cmd {
	if m.spinning {
		return nil
	}
	m.spinning = true
	return m.spin.Tick
}

// waitingHint says that the first message waits for n servers to start.
func waitingHint(n int) string {
	if n == 1 {
		return "waiting for 1 server to start — esc sends now"
	}
	return fmt.Sprintf("waiting for %d servers to start — esc sends now", n)
}

// queueClearedHint is said when Esc cleared the queue; it goes with the
// answer it was about.
const queueClearedHint = "queue cleared · esc again cancels the answer"

func (m *model) endTurn(err error) {
	if m.hint == queueClearedHint {
		m.hint = ""
	}
	m.endStreaming()
	m.retry = nil
	if errors.Is(err, app.ErrReported) {
		err = nil // the turn's TurnFinished showed it in the transcript
	}
	canceled := errors.Is(err, context.Canceled) || (m.cancelTurn != nil && m.ctx.Err() != nil)
	m.stopTools()
	switch {
	case canceled:
		if !m.lastIsCanceledTool() {
			m.notice(itemInfo, "canceled")
		}
	case err != nil && notSent(err) && m.turnInput != "":
		// Nothing reached the model: the text goes back to the input, to
		// fix (an @-mention) and send again.
		if hint := outsideHint(err); hint != "" {
			m.notice(itemError, err.Error()+hint)
		} else {
			m.notice(itemError, err.Error()+"\nthe message is back in the input: fix it and press enter to send it again")
		}
		m.giveBack(m.turnInput)
	case err != nil:
		m.notice(itemError, err.Error()+tooLongHint(err))
	}
	m.busy, m.cancelTurn, m.turnInput = false, nil, ""
	if m.waiting {
		m.waiting, m.hint = false, ""
	}
	m.ctxLine = m.contextStatus()
	m.offer = m.conv.ToolOffer() // the turn may have loaded tools
}

// showConfigWarnings says what of the configuration otter left out or
// could not honour, with the file and line to change: nothing else would
// tell the person that their project file is broken.
func (m *model) showConfigWarnings() {
	for _, w := range m.app.Warnings() {
		m.notice(itemError, "config: "+w)
	}
	for _, c := range m.extensionClashes() {
		m.notice(itemError, c)
	}
}

func (m *model) showReload(msg reloadedMsg, providerWas Provider) {
	what := "config reloaded"
	if msg.auto {
		what = "config changed on disk; reloaded"
	}
	if msg.err != nil {
		what = "config not reloaded"
		if msg.auto {
			what = "config changed on disk but not reloaded"
		}
		m.notice(itemError, fmt.Sprintf("%s, nothing changed: %v", what, msg.err))
		return
	}
	d := msg.diff
	var parts []string
	if len(d.Added) > 0 {
		parts = append(parts, "added "+strings.Join(d.Added, ", "))
	}
	if len(d.Removed) > 0 {
		parts = append(parts, "removed "+strings.Join(d.Removed, ", "))
	}
	if len(d.Changed) > 0 {
		parts = append(parts, "changed "+strings.Join(d.Changed, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "no server changed")
	}
	if len(d.Unchanged) > 0 {
		parts = append(parts, fmt.Sprintf("%d unchanged", len(d.Unchanged)))
	}
	if p := m.provider; p.Name != providerWas.Name || p.Model != providerWas.Model {
		if p.Name == "" {
			parts = append(parts, "no model provider now")
		} else {
			parts = append(parts, fmt.Sprintf("model %s/%s from the next message", p.Name, p.Model))
		}
	}
	m.notice(itemInfo, what+": "+strings.Join(parts, " · "))
}

// --- view ---

func (m *model) View() tea.View {
	m.ui.clock.viewed()
	v := tea.NewView(m.render())
	// The terminal's own cursor, at the input's: the terminal blinks it.
	// The textarea's drawn cursor blinked by redrawing the screen twice a
	// second, which kept an idle otter awake.
	if c := m.input.Cursor(); c != nil {
		c.Y += m.inputRow
		v.Cursor = c
	}
	v.AltScreen = true
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "otter"
	return v
}

func (m *model) mainHeight() int {
	h := m.height - 1 - 1 - m.input.Height() - len(m.queueView()) - len(m.hintLines()) // status, rule, input, queue
	return max(h, 1)
}

// hintLines is the hint above the input, at most maxHintLines of it,
// wrapped between the items it separates with two spaces (Tab's candidates,
// names to read whole, some with a space in them), else between words.
func (m *model) hintLines() []string {
	if m.hint == "" {
		return nil
	}
	width := max(m.width, 10)
	var lines []string
	for _, item := range strings.Split(m.hint, "  ") {
		switch n := len(lines) - 1; {
		case n >= 0 && ansi.StringWidth(lines[n])+2+ansi.StringWidth(item) <= width:
			lines[n] += "  " + item
		case ansi.StringWidth(item) <= width:
			lines = append(lines, item)
		default:
			lines = append(lines, strings.Split(ansi.Wrap(item, width, ""), "\n")...)
		}
	}
	// A quarter of the screen at most, so the transcript keeps its room;
	// what does not fit is said, never cut mid-name.
	if limit := max(m.height/4, 2); len(lines) > limit {
		lines = append(lines[:limit-1], fmt.Sprintf("… %d more lines", len(lines)-limit+1))
	}
	return lines
}

func (m *model) render() string {
	h := m.mainHeight()
	var main string
	switch top := m.focus(); {
	case top == nil:
		main = m.transcriptView(h)
	case isDocked(top):
		// A panel at the bottom, as high as it needs; the chat stays
		// visible above it (at least minChatLines of it).
		box := m.modalBox(top, max(h-minChatLines, min(h, 6)), false)
		if rest := h - lipgloss.Height(box); rest > 0 {
			main = m.transcriptView(rest) + "\n" + box
		} else {
			main = box
		}
	default:
		main = m.modalBox(top, h, true)
	}
	parts := append([]string{main}, m.queueView()...)
	for _, l := range m.hintLines() {
		parts = append(parts, m.st.dim.Render(l))
	}
	parts = append(parts, m.rule())
	above := strings.Join(parts, "\n")
	m.inputRow = strings.Count(above, "\n") + 1
	return above + "\n" + m.input.View() + "\n" + m.statusBar()
}

// minChatLines is how much of the transcript a docked panel leaves in
// view.
const minChatLines = 3

// initer is a modal that starts with a command (a huh form's cursor).
type initer interface{ init() tea.Cmd }

// docker is a modal that may be drawn as a panel at the bottom.
type docker interface{ docked() bool }

func isDocked(md modal) bool {
	d, ok := md.(docker)
	return ok && d.docked()
}

// modalBox draws md in a bordered box at most h lines high; fill makes it
// exactly h (a modal that covers the transcript).
func (m *model) modalBox(md modal, h int, fill bool) string {
	// The box takes the whole width (lipgloss widths include the border
	// and padding): 4 columns and 2 lines go to its frame.
	w, ih := max(m.width-4, 16), max(h-2, 1)
	body := md.view(w, ih)
	if !fill {
		body = strings.TrimRight(body, "\n ")
		body = clipLines(body, min(lipgloss.Height(body), ih), true)
	} else {
		body = clipLines(body, ih, true)
	}
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) <= w {
			continue
		}
		tail := "…"
		if ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " ")) <= w {
			tail = "" // only padding goes: nothing is cut
		}
		lines[i] = ansi.Truncate(l, w, tail)
	}
	return m.st.modal.Width(max(m.width, 20)).Render(strings.Join(lines, "\n"))
}

// rule is the line between the transcript and the input; scrolled back,
// it says what arrived below.
func (m *model) rule() string {
	w := max(m.width, 1)
	mark := m.scrollMarker()
	if mark == "" || ansi.StringWidth(mark)+4 > w {
		return m.st.border.Render(strings.Repeat("─", w))
	}
	right := w - 2 - ansi.StringWidth(mark)
	return m.st.border.Render("──") + m.st.accent.Render(mark) + m.st.border.Render(strings.Repeat("─", right))
}

// clipLines makes s exactly h lines: the first (or, with keepEnd=false,
// the last) h lines, padded with empty ones.
func clipLines(s string, h int, keepStart bool) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		if keepStart {
			lines = lines[:h]
		} else {
			lines = lines[len(lines)-h:]
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (m *model) statusBar() string {
	st := m.st
	provider := ""
	if m.provider.Help != "" {
		provider = "no provider"
	} else if m.provider.Name != "" || m.provider.Model != "" {
		provider = strings.Trim(m.provider.Name+"/"+m.provider.Model, "/")
	}
	connected, login, idle := 0, 0, 0
	for _, s := range m.servers {
		switch s.State {
		case app.StateConnected:
			connected++
		case app.StateNeedsAuth:
			login++
		case app.StateIdle:
			idle++
		}
	}
	// Each part with the order in which it goes when the bar is too
	// narrow (0: never); what goes first matters least.
	left := []barPart{{"otter", 1}, {provider, 7}, {fmt.Sprintf("%d/%d servers", connected, len(m.servers)), 8}, {fmt.Sprintf("%d tools", len(m.tools)), 4}}
	if idle > 0 {
		left = append(left, barPart{fmt.Sprintf("%d idle", idle), 5})
	}
	if login > 0 {
		left = append(left, barPart{fmt.Sprintf("%d need login", login), 0})
	}
	var right []barPart
	if m.busy || m.calls > 0 {
		right = append(right, barPart{m.spin.View() + " working", 0}, barPart{"esc cancels", 2})
	}
	if m.ctxLine != "" {
		share, cost, _ := strings.Cut(strings.TrimSpace(m.ctxLine), " · ")
		right = append(right, barPart{share, 6}, barPart{cost, 3})
	}
	// From the most to the least detailed, the first layout that fits.
	for level := 0; ; level++ {
		l, r := keptParts(left, level), keptParts(right, level)
		head, rest := "", l
		if len(l) > 0 && (l[0] == "otter" || l[0] == provider) { // the name and the model stand out
			n := 1
			if len(l) > 1 && l[0] == "otter" && l[1] == provider {
				n = 2
			}
			head, rest = " "+strings.Join(l[:n], " · "), l[n:]
		}
		mid := strings.Join(rest, " · ")
		if head != "" && mid != "" {
			mid = " · " + mid
		} else if head == "" {
			mid = " " + mid
		}
		line := st.statusKey.Render(head) + st.status.Render(mid)
		tail := strings.Join(r, " · ")
		if tail != "" {
			tail += " "
		}
		gap := m.width - lipgloss.Width(line) - lipgloss.Width(tail)
		if gap >= 1 {
			return line + st.status.Render(strings.Repeat(" ", gap)+tail)
		}
		if level > 8 { // narrower than what is never dropped: cut between words
			plain := ansi.Strip(line + " " + tail)
			for ansi.StringWidth(plain) > m.width {
				i := strings.LastIndex(strings.TrimRight(plain, " "), " ")
				if i <= 0 {
					return ""
				}
				plain = plain[:i]
			}
			return st.status.Render(plain)
		}
	}
}

// barPart is a part of the status bar and when it goes (see statusBar).
type barPart struct {
	text string
	drop int
}

// keptParts returns the texts of the parts that stay at level.
func keptParts(parts []barPart, level int) []string {
	var out []string
	for _, p := range parts {
		if p.text != "" && (p.drop == 0 || p.drop > level) {
			out = append(out, p.text)
		}
	}
	return out
}
