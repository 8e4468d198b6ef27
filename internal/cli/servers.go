package cli

// `otter mcp add|remove|get|enable|disable`: managing servers without an
// editor. Each edits the TOML file of one scope in place (see
// config.AddServer), keeping its comments and layout; a running TUI picks
// the change up through auto_reload or /mcp reload.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/termtext"
)

// MCPAddOptions are the options of `otter mcp add`.
type MCPAddOptions struct {
	Name      string
	Scope     string   // user (default), project or local
	Transport string   // stdio, http or sse; "" infers it
	Env       []string // K=V
	Headers   []string // 'K: V'
	Target    []string // COMMAND ARGS… or URL
	// Roots are the directories to offer the server as MCP roots (roots =
	// [...]), instead of the working directory; NoRoots offers none
	// (roots = []), so that a server such as server-filesystem keeps the
	// directories of its command line.
	Roots   []string
	NoRoots bool

	// FromRegistry takes the server from the MCP Registry: Name is its
	// name there, and the registry says how it runs. Args are values of
	// its arguments and template variables (NAME=VALUE; Env and Headers
	// give its environment variables and headers); Remote or Package
	// (npm, pypi, oci) choose how it runs; As names it in the config
	// (default: a short form of its registry name).
	FromRegistry bool
	Args         []string
	Remote       bool
	Package      string
	As           string
}

// RunMCPAdd adds a server to the config file of a scope.
func RunMCPAdd(ctx context.Context, f *Factory, o MCPAddOptions) error {
	if o.FromRegistry {
		return runMCPAddFromRegistry(ctx, f, o) // registry.go
	}
	switch {
	case len(o.Args) > 0, o.Remote, o.Package != "", o.As != "":
		return ExitCode(2, errors.New("--arg, --remote, --package and --as go with --from-registry"))
	}
	srv, err := o.server()
	if err != nil {
		return ExitCode(2, err)
	}
	file, scope, err := addServerEntry(f, o.Scope, srv, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "Added MCP server %q to %s (%s scope).\n", srv.Name, file, scope)
	fmt.Fprintln(f.IO.ErrOut, "otter: a running TUI picks it up with auto_reload, or with /mcp reload")
	return nil
}

// addServerEntry appends srv to the config file of scope (default user),
// after a comment line when comment is not "", refusing a name that is
// already defined; it returns the file and the scope.
func addServerEntry(f *Factory, scopeName string, srv config.Server, comment string) (string, config.Scope, error) {
	scope := config.Scope(cmpOr(scopeName, string(config.ScopeUser)))
	file, err := config.AddServerTo(f.LoadOptions(), scope, srv, comment)
	if de, ok := errors.AsType[*config.DefinedError](err); ok {
		return "", "", ExitCode(2, fmt.Errorf("%w; remove it first with `otter mcp remove %s`, or choose another name", de, de.Name))
	}
	if err != nil {
		return "", "", ExitCode(2, err)
	}
	return file, scope, nil
}

// server builds the server entry the options describe.
func (o MCPAddOptions) server() (config.Server, error) {
	srv := config.Server{Name: o.Name}
	if strings.TrimSpace(o.Name) == "" {
		return srv, errors.New("give the server a NAME")
	}
	if len(o.Target) == 0 {
		return srv, errors.New("give the server's command after --, or its URL: otter mcp add NAME -- COMMAND ARGS… | otter mcp add NAME URL")
	}
	isURL := strings.Contains(o.Target[0], "://")
	transport := o.Transport
	if transport == "" {
		transport = config.TransportStdio
		if isURL {
			transport = config.TransportHTTP
		}
	}
	switch transport {
	case config.TransportStdio:
		if isURL {
			return srv, fmt.Errorf("%q is a URL, not a command to run: a stdio server is started with its command (otter mcp add NAME -- COMMAND ARGS…); for a server at a URL use --transport http or sse, or leave --transport out", o.Target[0])
		}
		srv.Command, srv.Args = o.Target[0], slices.Clone(o.Target[1:])
		if len(o.Headers) > 0 {
			return srv, errors.New("--header is for http and sse servers; a stdio server takes --env")
		}
	case config.TransportHTTP, config.TransportSSE:
		if len(o.Target) != 1 {
			return srv, fmt.Errorf("an %s server takes one URL and nothing after it, not %q: give its headers with --header, or for a stdio server its command after --", transport, strings.Join(o.Target, " "))
		}
		u, err := url.Parse(o.Target[0])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return srv, fmt.Errorf("%q is not an http(s) URL", o.Target[0])
		}
		srv.URL = o.Target[0]
		if len(o.Env) > 0 {
			return srv, errors.New("--env is for stdio servers; an http or sse server takes --header")
		}
	default:
		return srv, fmt.Errorf("--transport %q: use stdio, http or sse", transport)
	}
	srv.Transport = transport
	for _, kv := range o.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return srv, fmt.Errorf("--env %q: write it as KEY=VALUE", kv)
		}
		if srv.Env == nil {
			srv.Env = map[string]string{}
		}
		srv.Env[k] = v
	}
	headers, err := parseHeaders(o.Headers)
	if err != nil {
		return srv, err
	}
	srv.Headers = headers
	srv.Roots, err = o.roots()
	return srv, err
}

// roots are the server's roots as --roots and --no-roots give them: nil
// (the working directory, by default), none, or the directories, each
// made absolute, since the config file is read from other directories.
func (o MCPAddOptions) roots() ([]string, error) {
	if o.NoRoots {
		if len(o.Roots) > 0 {
			return nil, errors.New("--roots and --no-roots contradict each other: give the directories, or none")
		}
		return []string{}, nil
	}
	var roots []string
	for _, d := range o.Roots {
		if strings.TrimSpace(d) == "" {
			return nil, fmt.Errorf("--roots %q: an empty directory name (separate directories with commas)", strings.Join(o.Roots, ","))
		}
		if d == "~" || strings.HasPrefix(d, "~/") || strings.Contains(d, "${") {
			roots = append(roots, d) // the config expands it
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("--roots %q: %w", d, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--roots %q: %s is not a directory", d, abs)
		}
		roots = append(roots, abs)
	}
	return roots, nil
}

// parseHeaders reads --header values, each 'Name: value'; nil for none.
func parseHeaders(flags []string) (map[string]string, error) {
	var headers map[string]string
	for _, h := range flags {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--header %q: write it as 'Name: value'", h)
		}
		if headers == nil {
			headers = map[string]string{}
		}
		headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return headers, nil
}

func scopeFile(f *Factory, scope config.Scope) (string, error) {
	lo := f.LoadOptions()
	return config.ScopeFile(lo.Paths, cmpOr(lo.WorkDir, "."), scope)
}

// MCPServerOptions are the options of `otter mcp remove|get|enable|disable`.
type MCPServerOptions struct {
	Name  string
	Scope string // "": the file that defines the server (the highest scope)
	JSON  bool   // get
}

// definedIn returns the file to change for server name: the file of
// o.Scope, or the one the configuration took it from; and the server as
// configured (nil if it is not).
func (o MCPServerOptions) definedIn(f *Factory) (string, *config.Server, error) {
	cfg, err := config.Load(f.LoadOptions())
	if err != nil {
		return "", nil, err
	}
	var srv *config.Server
	var names []string
	for i, s := range cfg.MCP.Servers {
		names = append(names, s.Name)
		if s.Name == o.Name {
			srv = &cfg.MCP.Servers[i]
		}
	}
	if o.Scope != "" {
		file, err := scopeFile(f, config.Scope(o.Scope))
		return file, srv, err
	}
	if srv == nil {
		return "", nil, fmt.Errorf("no MCP server named %q in the config%s", o.Name, quotedNames(names))
	}
	if srv.File == "" {
		return "", srv, fmt.Errorf("MCP server %q is not defined in a config file", o.Name)
	}
	return srv.File, srv, nil
}

func quotedNames(names []string) string {
	if len(names) == 0 {
		return " (none is configured)"
	}
	return " (configured: " + strings.Join(names, ", ") + ")"
}

// RunMCPRemove removes a server's entry from its config file.
func RunMCPRemove(f *Factory, o MCPServerOptions) error {
	file, _, err := o.definedIn(f)
	if err != nil {
		return ExitCode(2, err)
	}
	if filepath.Ext(file) == ".json" {
		return ExitCode(2, fmt.Errorf("MCP server %q is defined in %s: remove it there, or disable it with `otter mcp disable %s`", o.Name, file, o.Name))
	}
	if err := config.RemoveServer(file, o.Name); err != nil {
		return ExitCode(2, err)
	}
	fmt.Fprintf(f.IO.Out, "Removed MCP server %q from %s.\n", o.Name, file)
	if cfg, err := config.Load(f.LoadOptions()); err == nil {
		for _, s := range cfg.MCP.Servers {
			if s.Name == o.Name {
				fmt.Fprintf(f.IO.ErrOut, "otter: %q is still defined in %s:%d (%s scope)\n", o.Name, s.File, s.Line, s.Scope)
			}
		}
	}
	return nil
}

// RunMCPSetEnabled sets enabled = on in a server's entry. A server defined
// in a .mcp.json is switched in the local scope's file, whose entry of the
// same name overrides it field by field.
func RunMCPSetEnabled(f *Factory, o MCPServerOptions, on bool) error {
	file, srv, err := o.definedIn(f)
	if err != nil {
		return ExitCode(2, err)
	}
	if filepath.Ext(file) == ".json" {
		if file, err = scopeFile(f, config.ScopeLocal); err != nil {
			return ExitCode(2, err)
		}
	}
	err = config.SetServerEnabled(file, o.Name, on)
	if errors.Is(err, config.ErrNoServer) && srv != nil {
		// Not in this scope's file: an entry there of the same name
		// overrides the definition below.
		err = config.AddServer(file, config.Server{Name: o.Name, Enabled: &on})
	}
	if err != nil {
		return ExitCode(2, err)
	}
	word := "Disabled"
	if on {
		word = "Enabled"
	}
	fmt.Fprintf(f.IO.Out, "%s MCP server %q in %s.\n", word, o.Name, file)
	return nil
}

// RunMCPGet prints a server's resolved definition, secrets masked.
func RunMCPGet(f *Factory, o MCPServerOptions) error {
	o.Scope = ""
	_, srv, err := o.definedIn(f)
	if err != nil {
		return ExitCode(2, err)
	}
	m := serverJSONOf(srv.Masked())
	if o.JSON {
		return writeJSON(f.IO.Out, m)
	}
	return writeServerText(f.IO.Out, m)
}

// serverGetJSON is `otter mcp get --json`.
type serverGetJSON struct {
	Name      string            `json:"name"`
	Scope     string            `json:"scope"`
	File      string            `json:"file"`
	Line      int               `json:"line"`
	Transport string            `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Enabled   bool              `json:"enabled"`
	Disabled  string            `json:"disabled_reason,omitempty"`
	// Sandbox is a stdio server's sandbox table as configured (absent for
	// a remote server); whether this system can apply it is otter mcp
	// list's to say.
	Sandbox *SandboxJSON `json:"sandbox,omitempty"`
}

func serverJSONOf(s config.Server) serverGetJSON {
	t := s.Transport
	if t == "" {
		t = config.TransportStdio
		if s.URL != "" {
			t = config.TransportHTTP
		}
	}
	j := serverGetJSON{Name: s.Name, Scope: string(s.Scope), File: s.File, Line: s.Line, Transport: t,
		Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers,
		Enabled: s.IsEnabled(), Disabled: s.DisabledReason}
	if t == config.TransportStdio {
		sb := s.Sandbox
		j.Sandbox = &SandboxJSON{On: sb.IsEnabled(), Network: sb.NetworkAllowed(), Hosts: sb.NetworkHosts()}
		if sb != nil {
			j.Sandbox.Read, j.Sandbox.Write = sb.Read, sb.Write
		}
		if !sb.IsEnabled() {
			j.Sandbox.Off = "sandbox.enabled = false"
		}
	}
	return j
}

// sandboxText is a configured sandbox in words: what the entry adds to
// the default policy and which hosts it may reach.
func sandboxText(sb *SandboxJSON) string {
	if !sb.On {
		return "off (" + sb.Off + ")"
	}
	parts := []string{"on"}
	if len(sb.Read) > 0 {
		parts = append(parts, "also reads "+strings.Join(sb.Read, ", "))
	}
	if len(sb.Write) > 0 {
		parts = append(parts, "also writes "+strings.Join(sb.Write, ", "))
	}
	switch {
	case len(sb.Hosts) > 0:
		parts = append(parts, "network: only "+strings.Join(sb.Hosts, ", ")+" (through otter's proxy)")
	case sb.Network:
		parts = append(parts, "any host")
	default:
		parts = append(parts, "no network")
	}
	return termtext.Line(strings.Join(parts, " · "))
}

func writeServerText(w io.Writer, j serverGetJSON) error {
	fmt.Fprintf(w, "%s\n  defined:   %s:%d (%s scope)\n  transport: %s\n", j.Name, j.File, j.Line, j.Scope, j.Transport)
	if j.Command != "" {
		fmt.Fprintf(w, "  command:   %s\n", strings.Join(append([]string{j.Command}, j.Args...), " "))
	}
	if j.URL != "" {
		fmt.Fprintf(w, "  url:       %s\n", j.URL)
	}
	for _, k := range slices.Sorted(maps.Keys(j.Env)) {
		fmt.Fprintf(w, "  env:       %s=%s\n", k, j.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(j.Headers)) {
		fmt.Fprintf(w, "  header:    %s: %s\n", k, j.Headers[k])
	}
	if j.Sandbox != nil {
		fmt.Fprintf(w, "  sandbox:   %s\n", sandboxText(j.Sandbox))
	}
	state := "enabled"
	switch {
	case j.Disabled != "":
		state = "disabled: " + j.Disabled
	case !j.Enabled:
		state = "disabled (enabled = false)"
	}
	_, err := fmt.Fprintf(w, "  state:     %s\n", state)
	return err
}
