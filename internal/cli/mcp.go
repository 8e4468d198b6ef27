package cli

// `otter mcp list|tools|call`: the headless CLI over internal/app. Its
// output is a contract that scripts and otter's own checks rely on:
// results on stdout, everything else (logs, prompts, progress, errors) on
// stderr; exit 1 when a tool reports an error, 2 on usage, config or
// connection errors.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"mvdan.cc/sh/v3/shell"

	"github.com/otter-sh/otter/internal/app"
	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/iostreams"
	"github.com/otter-sh/otter/internal/oauth"
	"github.com/otter-sh/otter/internal/render"
	"github.com/otter-sh/otter/internal/schema"
	"github.com/otter-sh/otter/internal/termtext"
	"github.com/otter-sh/otter/internal/tool"
	"github.com/otter-sh/otter/internal/toolname"
	"github.com/otter-sh/otter/internal/webdata"
)

// MCPListOptions are the options of `otter mcp list`.
type MCPListOptions struct {
	JSON bool
}

// RunMCPList starts the configured servers and prints each one's state.
// It fails (exit status 1) when an enabled server is not connected, so that
// a script can tell; the list is printed all the same.
func RunMCPList(ctx context.Context, f *Factory, o MCPListOptions) error {
	// The servers get the same client as with tools and call (elicitation
	// offered, per the default --elicit policy), so they offer the
	// same tools: some servers list tools only for clients that can
	// answer their questions.
	s, err := startMCPSession(ctx, f, mcpSessionOptions{conn: &ConnOptions{}, lazy: true})
	if err != nil {
		return err
	}
	defer s.close()
	statuses := s.app.Servers()
	if len(statuses) == 0 && !o.JSON {
		fmt.Fprintf(f.IO.ErrOut, "No MCP servers are configured. Add a [[mcp.servers]] entry to %s (config.example.toml shows every key),\nor import a .mcp.json with `otter mcp import FILE --write`.\n", s.app.Paths.UserConfigFile())
	}
	if err := printServerList(f.IO.Out, statuses, o.JSON); err != nil {
		return err
	}
	var down []string
	enabled := 0
	for _, st := range statuses {
		if st.State == app.StateDisabled {
			continue
		}
		enabled++
		if st.State == app.StateIdle {
			continue // known and not needed yet: not a failure
		}
		if st.State != app.StateConnected {
			down = append(down, fmt.Sprintf("%s (%s)", st.Name, st.State))
		}
	}
	if len(down) > 0 {
		return ExitCode(1, fmt.Errorf("%d of the %d enabled MCP servers did not connect: %s", len(down), enabled, strings.Join(down, ", ")))
	}
	return nil
}

// MCPToolsOptions are the options of `otter mcp tools`.
type MCPToolsOptions struct {
	Server string // "": every server and the built-ins
	JSON   bool
	Conn   ConnOptions
	// Search, when set, lists the MCP tools the model's tool_search gives
	// for it, best first, at most Limit (0: as many as tool_search gives).
	Search string
	Limit  int
}

// RunMCPTools lists the tools of one server, or of every server and
// otter's built-ins.
func RunMCPTools(ctx context.Context, f *Factory, o MCPToolsOptions) error {
	adhoc, err := o.Conn.AdhocServer()
	if err != nil {
		return ExitCode(2, err)
	}
	if err := o.checkSearch(); err != nil {
		return ExitCode(2, err)
	}
	opts := mcpSessionOptions{conn: &o.Conn, adhoc: adhoc}
	switch {
	case adhoc != nil && o.Server != "":
		return ExitCode(2, fmt.Errorf("give either SERVER or --url/--sse/--stdio, not both"))
	case adhoc != nil:
		opts.only = adhoc.Name
	case o.Server != "":
		opts.only, opts.siblings = o.Server, true
	}
	s, err := startMCPSession(ctx, f, opts)
	if err != nil {
		return err
	}
	defer s.close()
	if opts.only == "" {
		for _, st := range s.app.Servers() {
			if st.State != app.StateConnected && st.State != app.StateDisabled {
				fmt.Fprintf(f.IO.ErrOut, "otter: %s\n", serverStateText(st.Name, st, nil))
			}
		}
	}
	var entries []tool.Entry
	for _, e := range s.app.ToolEntries() {
		if opts.only == "" || e.Info.Server == opts.only {
			entries = append(entries, e)
		}
	}
	for _, c := range s.app.ToolCollisions() {
		if opts.only == "" || c.Dropped.Server == opts.only {
			fmt.Fprintf(f.IO.ErrOut, "otter: %s\n", c)
		}
	}
	if o.Search != "" {
		return printSearch(f.IO.Out, searchTools(s.app, o, opts.only), o.JSON)
	}
	return printTools(f.IO.Out, entries, o.JSON)
}

// builtinNames are otter's own tools: calling one starts no server. Any
// other name may be a server's tool (qualified, or a bare name that one
// server has), so the servers start.
var builtinNames = []string{webdata.NameScrapePage, webdata.NameScrapeAPI, webdata.NameAnalyzeSite,
	webdata.NameExportData, webdata.NameGetStatus, webdata.NameListPresets}

// MCPCallOptions are the options of `otter mcp call`.
type MCPCallOptions struct {
	Args    []string // [SERVER] TOOL [JSON_ARGS]
	JSON    bool
	Timeout time.Duration // 0: the server's timeout
	Conn    ConnOptions
}

// RunMCPCall calls one tool and prints its result.
func RunMCPCall(ctx context.Context, f *Factory, o MCPCallOptions) error {
	adhoc, err := o.Conn.AdhocServer()
	if err != nil {
		return ExitCode(2, err)
	}
	target, err := ParseCallArgs(o.Args, adhoc != nil)
	if err != nil {
		return ExitCode(2, err)
	}
	rawArgs, err := ReadCallArgs(target.Args, f.IO.In)
	if err != nil {
		return ExitCode(2, err)
	}
	opts := mcpSessionOptions{conn: &o.Conn, adhoc: adhoc, timeout: o.Timeout, stdinUsed: target.Args == "-"}
	switch {
	case adhoc != nil:
		opts.only = adhoc.Name
		target.Server, target.label = adhoc.Name, adhocLabel(adhoc)
	case target.Server != "":
		opts.only = target.Server
	case target.Tool == webdata.NameGetStatus:
		// It reports the servers, so they start as for `otter mcp list`.
	case slices.Contains(builtinNames, target.Tool):
		opts.none = true // a built-in: no server needs to start
	}
	s, err := startMCPSession(ctx, f, opts)
	if err != nil {
		return err
	}
	defer s.close()
	name, err := resolveTool(s.app.ToolEntries(), target)
	if err != nil {
		if why := notOfferedError(ctx, s, target); why != nil {
			err = why
		}
		return ExitCode(2, err)
	}
	if err := checkCallArgs(s.app, name, rawArgs); err != nil {
		return ExitCode(2, err)
	}
	return runCall(ctx, f, s, name, rawArgs, o.Timeout, o.JSON)
}

// ConnOptions are the options of `tools` and `call` that name an ad hoc
// server and say how to answer its questions.
type ConnOptions struct {
	URL, SSE, Stdio string
	// Given lists which of --url, --sse and --stdio were given: an empty
	// value counts, so that `--stdio "$CMD"` with $CMD unset does not fall
	// back to the configured servers.
	Given          []string
	Headers        []string // 'Name: value'
	Elicit         string   // the --elicit policy; "": ask on a terminal, decline otherwise
	StartupTimeout time.Duration
	OAuth          OAuthOptions // --oauth-client-id, … for ad hoc servers
}

// adhocServer returns the server named by --url, --sse or --stdio, or nil.
func (c *ConnOptions) AdhocServer() (*config.Server, error) {
	var given []string
	for flag, v := range map[string]string{"--url": c.URL, "--sse": c.SSE, "--stdio": c.Stdio} {
		if v != "" || slices.Contains(c.Given, flag) {
			given = append(given, flag)
		}
	}
	if len(given) > 1 {
		slices.Sort(given)
		return nil, fmt.Errorf("%s: give only one ad hoc server", strings.Join(given, " and "))
	}
	if err := c.OAuth.Check(); err != nil {
		return nil, err
	}
	var probe config.Server
	c.OAuth.Apply(&probe)
	oauthGiven := probe.OAuth != nil
	if len(given) == 0 {
		switch {
		case len(c.Headers) > 0:
			return nil, errors.New("--header needs --url or --sse")
		case oauthGiven:
			return nil, errors.New("the --oauth-* flags need --url or --sse (a configured server takes them from [mcp.servers.oauth], or from `otter mcp login`)")
		}
		return nil, nil
	}
	srv := &config.Server{
		Scope:          config.ScopeFlag,
		StartupTimeout: config.Duration{Duration: config.DefaultStartupTimeout},
		Timeout:        config.Duration{Duration: config.DefaultTimeout},
	}
	switch {
	case given[0] == "--stdio":
		if len(c.Headers) > 0 || oauthGiven {
			return nil, errors.New("--header and --oauth-* apply to --url and --sse, not --stdio")
		}
		words, err := shell.Fields(c.Stdio, nil)
		if err != nil {
			return nil, fmt.Errorf("--stdio %q: %w", c.Stdio, err)
		}
		if len(words) == 0 {
			return nil, errors.New("--stdio: the command is empty")
		}
		srv.Transport = config.TransportStdio
		srv.Command, srv.Args = words[0], words[1:]
		srv.Name = filepath.Base(words[0])
	default:
		raw, transport := c.URL, app.TransportAuto
		if given[0] == "--sse" {
			raw, transport = c.SSE, config.TransportSSE
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s %q is not an http(s) URL of an MCP server", given[0], raw)
		}
		srv.Transport, srv.URL, srv.Name = transport, raw, u.Hostname()
		headers, err := parseHeaders(c.Headers)
		if err != nil {
			return nil, err
		}
		srv.Headers = headers
		c.OAuth.Apply(srv)
	}
	return srv, nil
}

// asker returns the answers to servers' questions that --elicit asks for.
func (c *ConnOptions) asker(streams *iostreams.IOStreams, stdinUsed bool) (*PolicyAsker, func(), error) {
	stdinTTY := streams.IsStdinTTY()
	stderrTTY := streams.IsStderrTTY()
	policy := ElicitDecline
	if c.Elicit != "" {
		p, err := ParseElicitPolicy(c.Elicit)
		if err != nil {
			return nil, nil, fmt.Errorf("--elicit: %w", err)
		}
		policy = p
	} else if stdinTTY && stderrTTY && !stdinUsed {
		policy = ElicitAsk
	}
	in := streams.In
	closeFn := func() {}
	if policy == ElicitAsk && stdinUsed {
		// stdin carries the arguments; ask on the terminal itself.
		tty, err := streams.OpenTerminal()
		if err != nil {
			return nil, nil, fmt.Errorf("--elicit ask: stdin holds the arguments and there is no terminal to ask on (%w); use another --elicit policy", err)
		}
		in, closeFn = tty, func() { tty.Close() }
	}
	return NewPolicyAsker(policy, in, streams.ErrOut, oauth.NewTerminalPrompter(streams.In, streams.ErrOut)), closeFn, nil
}

// mcpSessionOptions say which servers a command needs.
type mcpSessionOptions struct {
	conn      *ConnOptions   // the ad hoc server and --elicit options
	adhoc     *config.Server // an ad hoc server replacing the configured ones
	only      string         // manage only this server
	siblings  bool           // with only: also the servers whose tools get its name prefix, so that collisions resolve as in a full session
	none      bool           // manage no server (a built-in tool call)
	timeout   time.Duration  // --timeout: overrides the server's call timeout
	stdinUsed bool           // stdin carries the call's arguments
	// lazy leaves idle the servers an agent session would not start until
	// needed (app.Options.Lazy), as they are shown then.
	lazy bool
}

// mcpSession is a started App.
type mcpSession struct {
	app     *app.App
	logger  *slog.Logger
	cleanup []func()
}

func (s *mcpSession) close() {
	if s.app != nil {
		if err := s.app.Close(); err != nil {
			s.logger.Warn("stopping MCP servers", "err", err)
		}
	}
	for _, fn := range slices.Backward(s.cleanup) {
		fn()
	}
}

// startMCPSession loads the config, starts the servers the command needs
// and waits until none is pending (each bounded by its startup_timeout).
// With an ad hoc server or a named one, that server must have connected.
func startMCPSession(ctx context.Context, f *Factory, o mcpSessionOptions) (_ *mcpSession, err error) {
	logger, closeLog, err := f.headlessLogger()
	if err != nil {
		return nil, ExitCode(2, err)
	}
	s := &mcpSession{logger: logger, cleanup: []func(){closeLog}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	opts := f.AppOptions(logger)
	if o.conn != nil {
		asker, closeAsk, err := o.conn.asker(f.IO, o.stdinUsed)
		if err != nil {
			return nil, ExitCode(2, err)
		}
		s.cleanup = append(s.cleanup, closeAsk)
		opts.Asker = asker
	}
	if o.adhoc != nil {
		opts.Interactive = o.adhoc.Transport != config.TransportStdio
	}
	// The servers see the client they see from the TUI and otter -p, one
	// that offers sampling (declined here: nothing asks a model), so that
	// they list the same tools: a server that lists a tool only to a
	// client that can sample would otherwise have it pinned by one and
	// "new", held back, in the other — and `otter mcp diff` and `approve`
	// could not see the tool the TUI told the person to approve with them.
	opts.SamplingApprover = declineSampling{}
	opts.Lazy = o.lazy
	opts.SelectServers = func(configured []config.Server) ([]config.Server, error) {
		var out []config.Server
		switch {
		case o.none:
			return nil, nil
		case o.adhoc != nil:
			out = []config.Server{*o.adhoc}
		case o.only != "":
			i := slices.IndexFunc(configured, func(srv config.Server) bool { return srv.Name == o.only })
			if i < 0 {
				return nil, fmt.Errorf("no MCP server named %q in the config%s", o.only, mcpServerNames(configured))
			}
			srv := configured[i]
			if !srv.IsEnabled() {
				why := cmp.Or(srv.DisabledReason+trustHint(srv), "enabled = false in "+srv.File)
				return nil, fmt.Errorf("MCP server %q is disabled: %s", srv.Name, why)
			}
			out = []config.Server{srv}
			if o.siblings {
				prefix := toolname.Prefix(srv.Name)
				for _, c := range configured {
					if c.Name != srv.Name && c.IsEnabled() && toolname.Prefix(c.Name) == prefix {
						out = append(out, c)
					}
				}
			}
		default:
			out = configured
		}
		out = slices.Clone(out)
		for i := range out {
			if o.timeout > 0 {
				out[i].Timeout.Duration = o.timeout
			}
			if o.conn != nil && o.conn.StartupTimeout > 0 {
				out[i].StartupTimeout.Duration = o.conn.StartupTimeout
			}
		}
		return out, nil
	}
	a, err := app.New(ctx, opts)
	if err != nil {
		return nil, ExitCode(2, err)
	}
	s.app = a
	a.Start(ctx)
	if err := a.WaitSettled(ctx); err != nil {
		return nil, ExitCode(2, fmt.Errorf("waiting for MCP servers to start: %w", err))
	}
	if o.only != "" {
		st, ok := a.Server(o.only)
		if !ok {
			return nil, ExitCode(2, fmt.Errorf("MCP server %q was not started", o.only))
		}
		if st.State != app.StateConnected {
			return nil, ExitCode(2, serverStateError(st, o.adhoc))
		}
	}
	return s, nil
}

// serverStateError explains why a server is not connected. adhoc is the
// ad hoc server st is of, or nil.
func serverStateError(st app.ServerStatus, adhoc *config.Server) error {
	label := st.Name
	if adhoc != nil {
		label = adhocLabel(adhoc)
	}
	var b strings.Builder
	b.WriteString(serverStateText(label, st, adhoc))
	// The error quotes the last stderr line already; more lines say more.
	if n := len(st.StderrTail); n > 1 || (n == 1 && !strings.Contains(b.String(), st.StderrTail[0])) {
		b.WriteString("\nits last stderr lines:\n  " + strings.Join(st.StderrTail, "\n  "))
	}
	return errors.New(b.String())
}

// serverStateText says a server's state and its reason in a sentence, for
// messages: "MCP server db failed: …", "MCP server gh needs a login: …;
// run `otter mcp login gh` …", "MCP server x is disabled: …". label names
// the server; adhoc is the ad hoc server st is of, or nil: a login to it
// repeats the --oauth-* flags it was given.
func serverStateText(label string, st app.ServerStatus, adhoc *config.Server) string {
	why := st.Error
	var s string
	switch st.State {
	case app.StateFailed:
		s = "failed"
	case app.StateNeedsAuth:
		s = "needs a login"
		why = strings.TrimPrefix(strings.TrimPrefix(why, "authorization required"), ": ")
	case app.StateDisabled:
		s = "is disabled"
	case app.StatePending:
		s = "has not finished starting"
	case app.StateIdle:
		s = "is idle"
		why = fmt.Sprintf("not started until needed; otter knows its %d tools from an earlier connection", st.Tools)
	case app.StateConnected:
		s = "is connected"
	default:
		s = fmt.Sprintf("is in state %q", st.State)
	}
	text := fmt.Sprintf("MCP server %s %s", label, s)
	if why != "" {
		text += ": " + why
	}
	if st.State == app.StateNeedsAuth {
		text += "; " + loginAdvice(label, adhoc)
	}
	return text
}

// loginAdvice says how to log in to the server label names; adhoc is its
// settings if it is an ad hoc server, else nil. A configured server can be
// logged in to from the TUI as well, which a person at a shell may prefer.
func loginAdvice(label string, adhoc *config.Server) string {
	if adhoc != nil {
		return "run `" + loginCommand(label, oauth.AdhocSettings(*adhoc)) + "`"
	}
	return "run `" + loginCommand(label, nil) + "` (or, in the TUI, select it in /mcp and press l)"
}

// adhocLabel is how messages name an ad hoc server: a remote one by its
// URL (its password and secret-looking query values masked) rather than by
// the host it is registered under; a stdio one by its program's name.
func adhocLabel(srv *config.Server) string {
	return cmp.Or(config.MaskURL(srv.URL), srv.Name)
}

func mcpServerNames(servers []config.Server) string {
	if len(servers) == 0 {
		return " (no servers are configured; add [[mcp.servers]] to " + config.DefaultPaths().UserConfigFile() + ")"
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	return " (configured: " + strings.Join(names, ", ") + ")"
}

// ServerJSON is one element of `otter mcp list --json`.
type ServerJSON struct {
	Name        string `json:"name"`
	Transport   string `json:"transport"`
	State       string `json:"state"`
	Tools       int    `json:"tools"`
	Error       string `json:"error"`
	TokenExpiry string `json:"token_expiry,omitempty"` // RFC 3339, when a token is stored
	// NotOffered are the server's tools left out of the tool set because
	// another tool has the same qualified name.
	NotOffered []string `json:"not_offered,omitempty"`
	// ToolsChanged and ToolsNew count the server's tools held back because
	// their definitions differ from their pins or were never pinned
	// (HeldBack names them); InstructionsChanged: its instructions are
	// held back likewise. `otter mcp diff` shows them.
	ToolsChanged        int      `json:"tools_changed,omitempty"`
	ToolsNew            int      `json:"tools_new,omitempty"`
	InstructionsChanged bool     `json:"instructions_changed,omitempty"`
	HeldBack            []string `json:"held_back,omitempty"`
	// Sandbox is how a stdio server runs (absent for a remote one).
	Sandbox *SandboxJSON `json:"sandbox,omitempty"`
}

// SandboxJSON is a stdio server's sandbox in `otter mcp list --json` (as
// it runs) and `otter mcp get --json` (as configured).
type SandboxJSON struct {
	On      bool     `json:"on"`
	Read    []string `json:"read,omitempty"` // otter mcp get: the trees its entry adds to what it may read
	Write   []string `json:"write,omitempty"`
	Network bool     `json:"network"`         // any host
	Hosts   []string `json:"hosts,omitempty"` // with network false: the only hosts, through otter's proxy
	Off     string   `json:"off,omitempty"`   // why not confined
	// Weaker says why its network (none, or a host list) is confined less
	// than it should be on this system.
	Weaker string `json:"weaker,omitempty"`
}

func printServerList(w io.Writer, statuses []app.ServerStatus, asJSON bool) error {
	rows := make([]ServerJSON, 0, len(statuses))
	for _, st := range statuses {
		r := ServerJSON{Name: st.Name, Transport: st.Transport, State: string(st.State), Error: st.Error,
			Tools: max(st.Tools-len(st.NotOffered)-len(st.HeldBack), 0), InstructionsChanged: st.InstructionsHeldBack}
		for _, h := range st.HeldBack {
			r.HeldBack = append(r.HeldBack, h.Name)
			if h.New {
				r.ToolsNew++
			} else {
				r.ToolsChanged++
			}
		}
		if !st.TokenExpiry.IsZero() {
			r.TokenExpiry = st.TokenExpiry.Format(time.RFC3339)
		}
		for _, c := range st.NotOffered {
			r.NotOffered = append(r.NotOffered, c.Dropped.Name)
		}
		if sb := st.Sandbox; sb != nil {
			r.Sandbox = &SandboxJSON{On: sb.On, Write: sb.Write, Network: sb.Network || !sb.On, Hosts: sb.Hosts, Off: sb.Off, Weaker: sb.Weaker}
		}
		rows = append(rows, r)
	}
	if asJSON {
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTRANSPORT\tSTATE\tTOOLS\tERROR")
	for i, r := range rows {
		st := statuses[i]
		var notes []string
		if m := mcpFirstLine(r.Error); m != "" {
			notes = append(notes, m)
		}
		if !st.TokenExpiry.IsZero() {
			notes = append(notes, tokenNote(st.State, st.TokenExpiry, time.Now()))
		}
		if n := len(r.NotOffered); n > 0 {
			var holders []string
			for _, c := range st.NotOffered {
				holders = append(holders, cmp.Or(c.Kept.Server, "a built-in"))
			}
			holders = slices.Compact(slices.Sorted(slices.Values(holders)))
			notes = append(notes, fmt.Sprintf("%d tool(s) not offered (%s): same qualified name as a tool of %s; rename one server",
				n, strings.Join(r.NotOffered, ", "), strings.Join(holders, ", ")))
		}
		if note := heldBackNote(st); note != "" {
			notes = append(notes, note)
		}
		if r.Sandbox != nil && r.Sandbox.Weaker != "" {
			notes = append(notes, "sandbox's network confined less: "+r.Sandbox.Weaker)
		}
		// One row each: no cell may hold a newline or a tab.
		detail := termtext.Line(strings.Join(notes, "; "))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", termtext.Line(r.Name), cmp.Or(r.Transport, "-"), r.State, r.Tools, cmp.Or(detail, "-"))
	}
	return tw.Flush()
}

// tokenNote describes a stored OAuth token's expiry for `otter mcp list`.
func tokenNote(state app.ServerState, expiry, now time.Time) string {
	left := expiry.Sub(now)
	switch {
	case left <= 0 && state == app.StateNeedsAuth:
		return "token expired " + expiry.Format(time.RFC3339)
	case left <= 0:
		return "token expired; refreshed on next use"
	case left < 48*time.Hour:
		return "token expires in " + shortDuration(left)
	}
	return "token expires " + expiry.Format(time.RFC3339)
}

// shortDuration writes a positive time left as "<1m", "52m" or "3h05m".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// ToolJSON is one element of `otter mcp tools --json`.
type ToolJSON struct {
	Name        string               `json:"name"`
	Server      string               `json:"server"`
	Tool        string               `json:"tool"`
	Description string               `json:"description"`
	InputSchema json.RawMessage      `json:"input_schema"`
	Annotations *sdk.ToolAnnotations `json:"annotations"`
	// Unsupported says why otter cannot call the tool ("needs MCP tasks
	// (not supported yet)"); such a tool is not offered to models.
	Unsupported string `json:"unsupported,omitempty"`
	// HeldBack says why the tool is held back until the person approves
	// it (its definition is not the pinned one); it is not offered.
	HeldBack string `json:"held_back,omitempty"`
}

// toolJSON is e as `otter mcp tools --json` prints it.
func toolJSON(e tool.Entry) ToolJSON {
	schema := e.Info.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return ToolJSON{Name: e.Name, Server: e.Info.Server, Tool: e.Info.Name,
		Description: e.Info.Description, InputSchema: schema, Annotations: e.Info.Annotations, Unsupported: e.Info.Unsupported,
		HeldBack: e.Info.HeldBack}
}

func printTools(w io.Writer, entries []tool.Entry, asJSON bool) error {
	if asJSON {
		out := make([]ToolJSON, 0, len(entries))
		for _, e := range entries {
			out = append(out, toolJSON(e))
		}
		return writeJSON(w, out)
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "no tools")
		return err
	}
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(w)
		}
		// A server's names and descriptions are shown with every
		// character visible, a name on its line.
		origin := "built-in"
		if e.Info.Server != "" {
			origin = "server " + termtext.Line(e.Info.Server) + ", tool " + termtext.Line(e.Info.Name)
		}
		fmt.Fprintf(w, "%s  (%s)\n", e.Name, origin)
		if e.Info.Unsupported != "" {
			fmt.Fprintf(w, "    [%s: not offered to the model]\n", e.Info.Unsupported)
		}
		if e.Info.HeldBack != "" {
			fmt.Fprintf(w, "    [held back, not offered to the model: %s; %s]\n", e.Info.HeldBack, reviewHint(e.Info.Server))
		}
		if d := strings.TrimSpace(termtext.Visible(e.Info.Description)); d != "" {
			fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(d, "\n", "\n    "))
		}
		if args := termtext.Line(mcpDescribeArgs(e.Info.InputSchema)); args != "" {
			fmt.Fprintf(w, "    arguments: %s\n", args)
		}
	}
	return nil
}

// mcpDescribeArgs summarises an input schema: required arguments first,
// each group in the server's order, with an enum's choices and their names.
func mcpDescribeArgs(raw json.RawMessage) string {
	o, err := schema.Parse(raw)
	if len(raw) == 0 || err != nil {
		return ""
	}
	var parts []string
	for _, f := range o.RequiredFirst() {
		kind := cmp.Or(f.Schema.Type, strings.Join(f.Schema.Types, "|"), "any")
		if f.Required {
			kind += ", required"
		}
		if len(f.Choices) > 0 {
			var cs []string
			for _, c := range f.Choices {
				v, _ := json.Marshal(c.Value)
				if c.Title != "" {
					v = fmt.Appendf(v, " %q", c.Title)
				}
				cs = append(cs, string(v))
			}
			kind += ", one of " + strings.Join(cs, ", ")
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", f.Name, kind))
	}
	return strings.Join(parts, ", ")
}

// CallTarget is what `call`'s arguments name.
type CallTarget struct {
	Server, Tool, Args string
	label              string // how messages name the server (an ad hoc server's URL); "" means Server
}

// ParseCallArgs reads [SERVER] TOOL [JSON_ARGS]. With two arguments the
// second is JSON_ARGS when it looks like JSON or is "-", else TOOL.
func ParseCallArgs(args []string, adhoc bool) (CallTarget, error) {
	looksJSON := func(s string) bool {
		s = strings.TrimSpace(s)
		return s == "-" || strings.HasPrefix(s, "{")
	}
	var t CallTarget
	switch {
	case adhoc && len(args) > 2:
		return t, errors.New("with --url, --sse or --stdio give TOOL [JSON_ARGS], without SERVER")
	case adhoc:
		t.Tool = args[0]
		if len(args) == 2 {
			t.Args = args[1]
		}
	case len(args) == 1:
		t.Tool = args[0]
	case len(args) == 2 && looksJSON(args[1]):
		t.Tool, t.Args = args[0], args[1]
	case len(args) == 2:
		t.Server, t.Tool = args[0], args[1]
	default:
		t.Server, t.Tool, t.Args = args[0], args[1], args[2]
	}
	return t, nil
}

// ReadCallArgs returns the call's arguments as a JSON object.
func ReadCallArgs(arg string, stdin io.Reader) (json.RawMessage, error) {
	raw := []byte(arg)
	if arg == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read JSON_ARGS from stdin: %w", err)
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("JSON_ARGS must be a JSON object like '{\"a\": 1}': %s", cmp.Or(mcpErrText(err), "got null"))
	}
	return raw, nil
}

func mcpErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// resolveTool finds the qualified name of the tool t names.
func resolveTool(entries []tool.Entry, t CallTarget) (string, error) {
	if t.Server == "" {
		e, err := tool.Resolve(entries, t.Tool)
		var amb *tool.AmbiguousError
		switch {
		case err == nil:
			return e.Name, nil
		case errors.As(err, &amb):
			return "", fmt.Errorf("%w; give SERVER TOOL or the qualified name", amb)
		}
		var builtins []string
		for _, e := range entries {
			if e.Info.Server == "" {
				builtins = append(builtins, e.Name)
			}
		}
		return "", fmt.Errorf("no tool named %q: give SERVER TOOL, a qualified name (mcp__server__tool), a tool name one server has, or a built-in (%s); `otter mcp tools` lists them",
			t.Tool, strings.Join(builtins, ", "))
	}
	var names []string
	for _, e := range entries {
		if e.Info.Server != t.Server {
			continue
		}
		if e.Info.Name == t.Tool || e.Name == t.Tool {
			return e.Name, nil
		}
		names = append(names, e.Info.Name)
	}
	return "", fmt.Errorf("MCP server %s has no tool %q (its tools: %s)", cmp.Or(t.label, t.Server), t.Tool, cmp.Or(strings.Join(names, ", "), "none"))
}

// notOfferedError explains, for a tool resolveTool did not find, that the
// server has it but its allowed_tools or denied_tools keep otter from
// offering it, and what to change; nil when that is not why.
func notOfferedError(ctx context.Context, s *mcpSession, t CallTarget) error {
	for _, srv := range s.app.Config().MCP.Servers {
		if len(srv.AllowedTools) == 0 && len(srv.DeniedTools) == 0 {
			continue
		}
		// t names a tool of srv by its own name after SERVER, or by its
		// qualified name.
		names := func(name string) bool {
			return (t.Server == srv.Name && name == t.Tool) || toolname.Qualified(srv.Name, name) == t.Tool
		}
		if t.Server != srv.Name && !strings.HasPrefix(t.Tool, toolname.Prefix(srv.Name)) {
			continue
		}
		// The session lists the server's own tools, before the filters.
		own, found, listed := "", false, false
		if cs, ok := s.app.ServerSession(srv.Name); ok {
			lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			listed = true
			for st, err := range cs.Tools(lctx, nil) {
				if err != nil {
					listed = false
					break
				}
				if names(st.Name) {
					own, found = st.Name, true
					break
				}
			}
			cancel()
		}
		if !found && !listed && t.Server == srv.Name {
			own = t.Tool // the list is not at hand: judge by the name alone
		}
		if own == "" || tool.AllowedByFilter(srv.AllowedTools, srv.DeniedTools, own) {
			continue
		}
		where := ""
		if srv.File != "" {
			where = " in " + srv.File
			if srv.Line > 0 {
				where += fmt.Sprintf(":%d", srv.Line)
			}
		}
		has := fmt.Sprintf("MCP server %s has a tool %q, but otter does not offer it", srv.Name, own)
		if !found {
			has = fmt.Sprintf("otter does not offer a tool %q of MCP server %s", own, srv.Name)
		}
		var denied []string
		for _, p := range srv.DeniedTools {
			if ok, _ := path.Match(p, own); ok {
				denied = append(denied, p)
			}
		}
		if len(denied) > 0 {
			return fmt.Errorf("%s: it matches the server's denied_tools %s (the [[mcp.servers]] entry %q%s); remove the pattern from denied_tools to use it",
				has, quoteList(denied), srv.Name, where)
		}
		return fmt.Errorf("%s: it matches none of the server's allowed_tools %s (the [[mcp.servers]] entry %q%s); add its name to allowed_tools to use it",
			has, quoteList(srv.AllowedTools), srv.Name, where)
	}
	return nil
}

// quoteList writes patterns as a TOML array: ["a*", "b"].
func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// checkCallArgs refuses, before the call, arguments that do not match the
// tool's input schema, naming every problem: the tool never runs, so this
// is a usage error, not an error the tool reported.
func checkCallArgs(a *app.App, name string, args json.RawMessage) error {
	err := a.CheckToolArguments(name, args)
	var ae *tool.ArgumentsError
	if !errors.As(err, &ae) {
		return err
	}
	msg := fmt.Sprintf("%s was not called: the arguments do not match the tool's input schema: %s", name, strings.Join(ae.Problems, "; "))
	if e, ok := a.LookupTool(name); ok {
		if desc := mcpDescribeArgs(e.Info.InputSchema); desc != "" {
			msg += "\nits arguments: " + desc
		}
	}
	return errors.New(msg)
}

// runCall calls the tool and prints its result.
func runCall(ctx context.Context, f *Factory, s *mcpSession, name string, args json.RawMessage, timeout time.Duration, asJSON bool) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	stderr := f.IO.ErrOut
	showProgress := f.IO.IsStderrTTY()
	ctx = tool.WithProgress(ctx, func(p tool.Progress) {
		s.logger.Info("progress", "tool", name, "progress", p.Progress, "total", p.Total, "message", p.Message)
		if showProgress {
			total := ""
			if p.Total > 0 {
				total = fmt.Sprintf("/%g", p.Total)
			}
			fmt.Fprintf(stderr, "otter: progress %g%s %s\n", p.Progress, total, p.Message)
		}
	})
	res, err := s.app.CallTool(ctx, name, args)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && timeout > 0 {
			return ExitCode(2, fmt.Errorf("call %s: no result after --timeout %s: %w", name, timeout, err))
		}
		if _, ok := errors.AsType[*app.URLElicitationError](err); ok {
			return ExitCode(2, err) // it names the tool and says what to open
		}
		return ExitCode(2, fmt.Errorf("call %s: %w", name, err))
	}
	out := f.IO.Out
	if asJSON {
		if err := writeJSON(out, res); err != nil {
			return ExitCode(2, err)
		}
		if res.IsError {
			return ExitCode(1, fmt.Errorf("%s reported an error", name))
		}
		return nil
	}
	if res.IsError {
		var b strings.Builder
		mcpWriteResult(&b, res)
		return ExitCode(1, fmt.Errorf("%s reported an error: %s", name, strings.TrimSpace(b.String())))
	}
	mcpWriteResult(out, res)
	return nil
}

// mcpWriteResult prints a result for a person, as the TUI shows it (see
// render.Terminal).
func mcpWriteResult(w io.Writer, res *tool.Result) {
	if text := render.Terminal(res, nil); text != "" || len(res.Content) > 0 {
		fmt.Fprintln(w, text)
	}
}

func mcpFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
