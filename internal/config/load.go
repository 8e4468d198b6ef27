package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/otter-sh/otter/internal/hooks"
	"github.com/otter-sh/otter/internal/projectfile"
	"github.com/otter-sh/otter/internal/sandbox"
	"github.com/otter-sh/otter/internal/termtext"
)

// File names inside a project.
const (
	// ProjectDirName is the directory of project and local config files.
	ProjectDirName = ".otter"
	// ProjectConfigName is the project-scope file in ProjectDirName (committed).
	ProjectConfigName = "config.toml"
	// LocalConfigName is the local-scope file in ProjectDirName (not committed).
	LocalConfigName = "config.local.toml"
	// MCPJSONName is the project's .mcp.json, read as a project-scope source.
	MCPJSONName = ".mcp.json"
)

// Defaults applied by Load and LoadFile.
const (
	DefaultStartupTimeout       = 30 * time.Second
	DefaultTimeout              = 5 * time.Minute
	DefaultHealthCheckInterval  = 30 * time.Second
	MinHealthCheckInterval      = time.Second // shorter would keep a core busy pinging
	DefaultMaxReconnectAttempts = 5
	DefaultReconnectDelay       = time.Second
	DefaultMaxTurns             = 50
	DefaultMaxOutputChars       = 100_000
	DefaultMaxBodyBytes         = 10 << 20
)

// LoadOptions say where Load looks.
type LoadOptions struct {
	Paths     Paths                       // zero value: DefaultPaths()
	WorkDir   string                      // "" = os.Getwd()
	Extra     string                      // an extra file given on the command line, ScopeFlag, highest
	LookupEnv func(string) (string, bool) // nil = os.LookupEnv
	// ExtraHint is what to do when Extra does not exist, as the front end
	// words it (naming its flag); "" = check the path.
	ExtraHint string
}

// Load reads every scope, lowest first: the user file
// ($XDG_CONFIG_HOME/otter/config.toml), the project's .mcp.json, the
// project's .otter/config.toml, the local .otter/config.local.toml and the
// Extra file. The project is ProjectDir(WorkDir). Missing files are skipped
// (except Extra). Servers merge by name and every table merges key by key:
// a higher scope overrides only the keys it sets.
//
// Project-scope files count only once the user trusted the project
// directory (Paths.Trust): until then their servers are listed with a
// DisabledReason and their other tables are ignored.
//
// ${VAR} and ${VAR:-default} are expanded (see expandVars) in servers'
// command, args, env, cwd, url, headers and oauth client_id, client_secret,
// private_key_file and private_key_pem,
// in providers' api_key, base_url and headers, in serve.api_keys and in the
// tools.export_dir and serve.audit_log paths. A reference that cannot be
// expanded (an unset variable without a default, a malformed reference)
// keeps its text as written and is an error, except that:
//
//   - in a server it does not fail Load: it becomes that server's Problem,
//     so that the other servers still start; in a server that does not
//     start anyway (enabled = false, or untrusted) it is ignored;
//   - in serve.api_keys it goes to Serve.KeysError;
//   - in a provider it becomes that provider's Problem, reported when the
//     provider is built.
//
// Every problem is an *Error naming file and line; several are joined with
// errors.Join.
func Load(opts LoadOptions) (*Config, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	paths := opts.Paths
	r := &resolver{paths: paths, workDir: opts.WorkDir, lookup: opts.LookupEnv, projDir: ProjectDir(opts.WorkDir)}

	var approvals Approvals
	if r.projDir != "" {
		if approvals, err = paths.ApprovalsFor(r.projDir); err != nil {
			return nil, err
		}
	} else {
		// Outside a project, whether the working directory is trusted
		// still says whether its instruction files are read.
		approvals, _ = paths.ApprovalsFor(opts.WorkDir)
	}
	projTrusted := r.projDir != "" && approvals.Trusted()
	var files []*fileData
	var errs errList
	var held []*Error
	for _, src := range candidates(opts, r.projDir) {
		missing := "" // scope files are optional
		if src.Scope == ScopeFlag {
			missing = cmp.Or(opts.ExtraHint, missingFileHint)
		}
		if src.Scope == ScopeLocal && !usersLocalFile(r.projDir, src.Path) {
			// The local file is the user's own, never committed. One that
			// came with the project (tracked by git, or reached through a
			// symlink) needs trust like the project's other files.
			src.Scope = ScopeProject
		}
		f, ferrs := readConfigFile(src.Path, src.Scope, missing)
		if len(ferrs) > 0 && src.Scope == ScopeProject && !projTrusted {
			// A broken file in a project the user has not trusted (yet)
			// must not stop the user's own servers: it is left out, and
			// `otter config validate` names the problem.
			for _, err := range ferrs {
				var e *Error
				if !errors.As(err, &e) {
					e = &Error{File: src.Path, Msg: err.Error()}
				}
				if e.Hint != "" {
					e.Hint += "; "
				}
				e.Hint += "until then otter ignores this untrusted project file"
				held = append(held, e)
			}
			continue
		}
		errs = append(errs, ferrs...)
		if f != nil {
			if f.src.Scope == ScopeProject {
				f.src.Trusted = projTrusted
			}
			files = append(files, f)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// What changed since the user trusted the project is held back.
	trust := projectTrust(r.projDir, files, approvals)
	cfg, err := r.resolve(files)
	if cfg != nil {
		cfg.Warnings = append(held, cfg.Warnings...)
		cfg.ProjectTrust = trust
	}
	return cfg, err
}

// withDefaults fills in the zero fields of LoadOptions; WorkDir becomes
// absolute.
func (o LoadOptions) withDefaults() (LoadOptions, error) {
	if o.Paths == (Paths{}) {
		o.Paths = DefaultPaths()
	}
	wd, err := absDir(o.WorkDir)
	if err != nil {
		return o, err
	}
	o.WorkDir = wd
	return o, nil
}

// CandidateFiles lists the files Load reads for opts, lowest scope first,
// whether or not they exist (Trusted is not filled in): what a watcher for
// auto_reload watches.
func CandidateFiles(opts LoadOptions) ([]Source, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return candidates(opts, ProjectDir(opts.WorkDir)), nil
}

func candidates(opts LoadOptions, projDir string) []Source {
	srcs := []Source{{Path: opts.Paths.UserConfigFile(), Scope: ScopeUser}}
	if projDir != "" {
		srcs = append(srcs, projectSources(projDir)...)
	}
	if opts.Extra != "" {
		srcs = append(srcs, Source{Path: opts.Extra, Scope: ScopeFlag})
	}
	return srcs
}

// LoadFile reads one file alone, with no scopes and no trust check: a
// TOML config file, or a .json file in the .mcp.json shape. Variables are
// expanded from the environment and defaults applied as in Load.
func LoadFile(p string) (*Config, error) {
	f, errs := readConfigFile(p, ScopeFlag, missingFileHint)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	wd, err := absDir("")
	if err != nil {
		return nil, err
	}
	r := &resolver{paths: DefaultPaths(), workDir: wd}
	return r.resolve([]*fileData{f})
}

func absDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("config: working directory: %w", err)
		}
		return wd, nil
	}
	return filepath.Abs(dir)
}

// ProjectDir returns the project workDir is in: the nearest directory,
// walking up from workDir, that holds a .otter directory, a .mcp.json file
// or .git (a repository's root, or a worktree's or submodule's); "" if
// there is none. It is the one notion of "the project" otter has: where
// its config files, instruction files (from there down to workDir),
// commands, skills and hooks come from, and the directory whose trust
// lets them count. A .otter or .mcp.json in a subdirectory of a
// repository makes that subdirectory a project of its own.
func ProjectDir(workDir string) string {
	dir, err := absDir(workDir)
	if err != nil {
		return ""
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, ProjectDirName)); err == nil && fi.IsDir() {
			return dir
		}
		if fi, err := os.Stat(filepath.Join(dir, MCPJSONName)); err == nil && fi.Mode().IsRegular() {
			return dir
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// fileData is one parsed file.
type fileData struct {
	src     Source
	cfg     Config         // its tables other than mcp.servers
	raw     map[string]any // the keys it sets
	servers []fileServer
	ix      *posIndex // nil for JSON files
	// heldSettings: the tables other than servers and hooks changed since
	// the user trusted the project, and are left out (see projectTrust).
	heldSettings bool
}

// fileServer is one server entry of a file.
type fileServer struct {
	srv Server
	raw map[string]any // the keys the entry sets
	idx int            // its index among the file's entries
	// held: the entry was added or changed since the user trusted the
	// project; it does not start until they trust it again.
	held bool
}

const serversArr = "mcp.servers"

// line returns the line of a top-level key path.
func (f *fileData) line(p toml.Key) int { return f.ix.line(p, "", 0) }

// serverLine returns the line of key path sub inside a server's entry.
func (f *fileData) serverLine(s fileServer, sub toml.Key) int {
	if f.ix == nil {
		return s.srv.Line
	}
	full := append(toml.Key{"mcp", "servers"}, sub...)
	if l := f.ix.line(full, serversArr, s.idx); l > 0 {
		return l
	}
	return s.srv.Line
}

// missingFileHint is what to do about a file named on the command line
// (otter config validate PATH, otter mcp import FILE) that does not exist.
const missingFileHint = "check the path; a relative one starts at the working directory"

// readConfigFile reads and parses one file. A missing file is nil, nil
// when missingHint is empty, else an error with missingHint as what to do.
func readConfigFile(p string, scope Scope, missingHint string) (*fileData, errList) {
	read := readBounded
	if scope == ScopeFlag {
		read = readBoundedNamed
	}
	data, err := read(p)
	if e := (*Error)(nil); errors.As(err, &e) {
		return nil, errList{e}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && missingHint == "" {
			return nil, nil
		}
		hint := "check the path and its permissions"
		switch {
		case errors.Is(err, fs.ErrNotExist):
			hint = missingHint
		case errors.Is(err, projectfile.ErrNotRegular):
			hint = "a config file must be a regular file; remove or replace this one"
		}
		return nil, errList{&Error{File: p, Msg: "cannot read config file: " + unwrapPathError(err), Hint: hint}}
	}
	if isJSONFile(p) {
		servers, errs := parseMCPJSON(data, p, scope == ScopeProject)
		if len(errs) > 0 {
			return nil, errs.collapse()
		}
		f := &fileData{src: Source{Path: p, Scope: scope, Trusted: true}}
		for i, s := range servers {
			s.Scope = scope
			f.servers = append(f.servers, fileServer{srv: s, raw: rawFromValue(s), idx: i})
		}
		return f, nil
	}
	f, errs := parseTOML(p, data, scope)
	return f, errs.collapse()
}

func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// tomlDoc decodes a file with each server kept as a toml.Primitive, so that
// every server decodes on its own and its errors name the right entry.
type tomlDoc struct {
	Config
	MCP tomlDocMCP `toml:"mcp"`
}

type tomlDocMCP struct {
	MCP
	Servers []toml.Primitive `toml:"servers"`
}

// parseTOML parses and checks one TOML file.
func parseTOML(p string, data []byte, scope Scope) (*fileData, errList) {
	text := string(data)
	f := &fileData{src: Source{Path: p, Scope: scope, Trusted: true}}
	var errs errList
	if _, err := toml.Decode(text, &f.raw); err != nil {
		return nil, errList{syntaxError(p, err)}
	}
	f.ix = scanPositions(text)
	var doc tomlDoc
	md, err := toml.Decode(text, &doc)
	if err != nil {
		return nil, errList{f.decodeError(err, "", 0, "")}
	}
	f.cfg = doc.Config
	f.placeHooks()
	f.cfg.MCP = doc.MCP.MCP
	f.cfg.MCP.Servers = nil
	rawServers := rawServerList(f.raw)
	for i, prim := range doc.MCP.Servers {
		var raw map[string]any
		if i < len(rawServers) {
			raw = rawServers[i]
		}
		name, _ := raw["name"].(string)
		var s Server
		if err := md.PrimitiveDecode(prim, &s); err != nil {
			errs = append(errs, f.decodeError(err, serversArr, i, name))
			continue
		}
		s.Scope, s.File = scope, p
		s.Line = f.ix.line(toml.Key{"mcp", "servers"}, serversArr, i)
		f.servers = append(f.servers, fileServer{srv: s, raw: raw, idx: i})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	f.unknownKeys(md, rawServers, &errs)
	f.checkNames(&errs)
	f.check(&errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return f, nil
}

// rawServerList returns the [[mcp.servers]] entries of a generic decode.
func rawServerList(raw map[string]any) []map[string]any {
	m, _ := raw["mcp"].(map[string]any)
	var out []map[string]any
	switch v := m["servers"].(type) {
	case []map[string]any:
		out = v
	case []any:
		for _, e := range v {
			em, _ := e.(map[string]any)
			out = append(out, em)
		}
	}
	return out
}

// syntaxError turns a toml.ParseError into an *Error.
func syntaxError(file string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{File: file, Msg: err.Error(), Hint: "fix the TOML syntax"}
	}
	hint := "fix the TOML syntax; strings need quotes, tables are [name], each server starts with [[mcp.servers]]"
	if u := strings.TrimSpace(pe.Usage); u != "" {
		hint = strings.Join(strings.Fields(u), " ")
	}
	line := pe.Position.Line
	if strings.HasSuffix(pe.Message, `but got '\n' instead`) && line > 1 {
		// The parser stands on the newline that ends the broken line
		// (an unclosed "[mcp"), which it counts as the next line's.
		line--
	}
	return &Error{File: file, Line: line, Msg: "TOML syntax error: " + pe.Message, Hint: hint}
}

var lastKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "(.*)"\): (.*)$`) })
var typeMismatchRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^incompatible types: TOML value has type (\S+); destination has type (\S+)$`)
})

// tableMismatchRE is the toml package's message for a value where a table
// goes ("mcp = 5"), which names otter's Go type.
var tableMismatchRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^type mismatch for \S+: expected table but found (\S+)$`)
})

// tomlTypeName names a type from the toml package's messages for a user.
func tomlTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "map"), t == "struct":
		return "a table"
	case t == "slice" || t == "array" || strings.HasPrefix(t, "[]"):
		return "an array"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	}
	return t
}

var durationKeys = map[string]bool{"health_check_interval": true, "reconnect_delay": true, "startup_timeout": true, "timeout": true}

// decodeError turns an error of typed decoding into an *Error. arr/idx name
// the array entry being decoded: the toml package reports the line of the
// last entry that has the key, not of the one that failed.
func (f *fileData) decodeError(err error, arr string, idx int, server string) error {
	var key, msg string
	line := 0
	var pe toml.ParseError
	if errors.As(err, &pe) {
		key, msg, line = pe.LastKey, pe.Message, pe.Position.Line
	} else if m := lastKeyRE().FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		key, msg = m[2], m[3]
	} else {
		msg = strings.TrimPrefix(err.Error(), "toml: ")
	}
	if key != "" && arr != "" {
		if l := f.ix.lineOf(key, arr, idx); l > 0 {
			line = l
		}
	}
	if line == 0 && arr != "" {
		line = f.ix.line(toml.Key{"mcp", "servers"}, arr, idx)
	}
	if m := typeMismatchRE().FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("must be %s, not %s", tomlTypeName(m[2]), tomlTypeName(m[1]))
	} else if m := tableMismatchRE().FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("must be a table ([%s]), not %s", key, tomlTypeName(m[1]))
	}
	last := key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		last = key[i+1:]
	}
	hint := "check the value's type against config.example.toml"
	switch {
	case durationKeys[last]:
		hint = `write a duration such as "500ms", "30s", "5m" or "1h30m"`
	case key == "mcp.servers":
		hint = "write each server as its own [[mcp.servers]] table (two brackets)"
	}
	where := ""
	if server != "" {
		where = fmt.Sprintf("server %q: ", server)
	}
	if key != "" {
		return &Error{File: f.src.Path, Line: line, Msg: fmt.Sprintf("%sbad value for %s: %s", where, key, msg), Hint: hint}
	}
	return &Error{File: f.src.Path, Line: line, Msg: where + msg, Hint: hint}
}

// unknownKeys reports keys that no field decodes.
func (f *fileData) unknownKeys(md toml.MetaData, rawServers []map[string]any, errs *errList) {
	seen := map[string]int{}
	reported := map[string]bool{}
outer:
	for _, k := range md.Undecoded() {
		s := k.String()
		n := seen[s]
		seen[s]++
		for j := 1; j < len(k); j++ {
			if reported[k[:j].String()] {
				continue outer // inside an unknown table already reported
			}
		}
		reported[s] = true
		line, arr, idx := f.ix.nth(s, n)
		if line == 0 {
			line = f.ix.line(k, "", 0)
		}
		parent, last := k[:len(k)-1], k[len(k)-1]
		where := "at the top level"
		switch {
		case arr == serversArr && len(parent) >= 2 && parent[0] == "mcp" && parent[1] == "servers":
			name := ""
			if idx < len(rawServers) {
				name, _ = rawServers[idx]["name"].(string)
			}
			where = fmt.Sprintf("in server %q", name)
			if len(parent) > 2 {
				where = fmt.Sprintf("in [%s] of server %q", parent.String(), name)
			}
		case len(parent) > 0:
			where = fmt.Sprintf("in [%s]", parent.String())
		}
		errs.add(f.src.Path, line, unknownKeyHint(last, knownKeys(parent)), "unknown key %q %s", last, where)
	}
}

// checkNames reports servers without a name and names used twice.
func (f *fileData) checkNames(errs *errList) {
	first := map[string]int{}
	for _, s := range f.servers {
		if strings.TrimSpace(s.srv.Name) == "" {
			errs.add(f.src.Path, s.srv.Line, `add name = "..."; otter names the server's tools mcp__NAME__TOOL`, "a [[mcp.servers]] entry has no name")
			continue
		}
		if checkServerName(errs, f.src.Path, f.serverLine(s, toml.Key{"name"}), s.srv.Name) {
			continue
		}
		if l, ok := first[s.srv.Name]; ok {
			errs.add(f.src.Path, f.serverLine(s, toml.Key{"name"}), "rename one of them or merge the two entries",
				"server %q is defined twice in this file (first at line %d)", s.srv.Name, l)
			continue
		}
		first[s.srv.Name] = f.serverLine(s, toml.Key{"name"})
	}
}

// checkServerName reports a server name that holds a character a
// terminal acts on or does not show — a control (ESC starts sequences that
// set the clipboard or the window title, a newline forges a row of a
// table), a bidirectional override, an invisible character — and whether
// it did: such a name is refused, never printed. The message quotes the
// name escaped.
func checkServerName(errs *errList, file string, line int, name string) bool {
	r, bad := termtext.Unsafe(name)
	if !bad {
		return false
	}
	errs.add(file, line, "use letters, digits, '-', '_' or '.'; otter prints server names in tables and prompts",
		"server name %+q holds %U, a control, invisible or bidirectional character", name, r)
	return true
}

// check validates the values of one file, each at its line.
func (f *fileData) check(errs *errList) {
	file := f.src.Path
	c := &f.cfg
	f.checkHooks(errs)
	if d := c.MCP.HealthCheckInterval.Duration; d > 0 && d < MinHealthCheckInterval {
		errs.add(file, f.line(toml.Key{"mcp", "health_check_interval"}), fmt.Sprintf("use a duration of %s or more, such as the default %q, or a negative one to stop the pings", MinHealthCheckInterval, DefaultHealthCheckInterval.String()),
			"mcp.health_check_interval = %s is too short: every connected server would be pinged that often", d)
	}
	if d := c.MCP.ReconnectDelay.Duration; d < 0 {
		errs.add(file, f.line(toml.Key{"mcp", "reconnect_delay"}), "use a positive duration such as \"1s\"", "mcp.reconnect_delay must not be negative")
	}
	if c.MCP.MaxReconnectAttempts < 0 {
		errs.add(file, f.line(toml.Key{"mcp", "max_reconnect_attempts"}), "use 0 to never reconnect", "mcp.max_reconnect_attempts must not be negative")
	}
	checkIdleTimeout(c.MCP.IdleTimeout.Duration, "mcp.idle_timeout", file, f.line(toml.Key{"mcp", "idle_timeout"}), errs)
	if r := c.MCP.Registry; r != "" {
		if u, err := url.Parse(r); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs.add(file, f.line(toml.Key{"mcp", "registry"}), fmt.Sprintf("write the registry's base URL, such as %q (otter adds /v0.1/servers)", DefaultRegistry),
				"mcp.registry = %q is not an http(s) URL", r)
		}
	}
	for _, s := range f.servers {
		checkServerValues(s.srv, file, func(k ...string) int { return f.serverLine(s, k) }, errs)
	}
	if c.Agent.MaxTurns < 0 {
		errs.add(file, f.line(toml.Key{"agent", "max_turns"}), "use a positive number (default 50)", "agent.max_turns must not be negative")
	}
	switch c.Agent.ToolSearch {
	case "", ToolSearchAuto, ToolSearchAlways, ToolSearchNever:
	default:
		errs.add(file, f.line(toml.Key{"agent", "tool_search"}),
			`use "auto" (defer MCP tools when they pass the budget or the provider's tool limit), "always" or "never"`,
			"agent.tool_search: unknown value %q", c.Agent.ToolSearch)
	}
	if c.Agent.ToolSearchBudget < 0 {
		errs.add(file, f.line(toml.Key{"agent", "tool_search_budget"}), "use a number of tokens, or leave it out for 10 % of the model's context window",
			"agent.tool_search_budget must not be negative")
	}
	if rawHas(f.raw, "agent", "compact_at") && (c.Agent.CompactAt <= 0 || c.Agent.CompactAt > 1) {
		errs.add(file, f.line(toml.Key{"agent", "compact_at"}), "use a share of the context window such as 0.8 (more than 0, at most 1)",
			"agent.compact_at = %v is not a share of the context window", c.Agent.CompactAt)
	}
	for name, p := range c.Providers {
		switch p.Type {
		case "", "openai", "anthropic", "openai-responses":
		default:
			errs.add(file, f.line(toml.Key{"providers", name, "type"}),
				`use "anthropic", "openai-responses" for OpenAI's Responses API, or "openai" (Chat Completions) for OpenAI and every OpenAI-compatible server (Ollama, vLLM, LM Studio, ...)`,
				"providers.%s: unknown type %q", name, p.Type)
		}
		f.checkLimits(errs, toml.Key{"providers", name}, ModelLimits{ContextWindow: p.ContextWindow, MaxOutputTokens: p.MaxOutputTokens})
		if !validThinking(p.Thinking) {
			errs.add(file, f.line(toml.Key{"providers", name, "thinking"}), `use "off", "low", "medium", "high" or a token budget of at least 1024`,
				"providers.%s: thinking = %q is not a reasoning level", name, p.Thinking)
		}
		for model, l := range p.Models {
			f.checkLimits(errs, toml.Key{"providers", name, "models", model}, l)
		}
	}
	for model, p := range c.Pricing {
		key := toml.Key{"pricing", model}
		if p.Input < 0 || p.Output < 0 || p.CachedInput < 0 || p.CacheWrite < 0 {
			errs.add(file, f.line(key), "prices are US dollars per million tokens and cannot be negative", "pricing.%q: a price is negative", model)
		}
	}
	if c.Sessions.KeepDays != nil && *c.Sessions.KeepDays < 0 {
		errs.add(file, f.line(toml.Key{"sessions", "keep_days"}), "use a number of days, or 0 to keep every session", "sessions.keep_days must not be negative")
	}
	if c.Tools.MaxOutputChars < 0 || c.Tools.MaxBodyBytes < 0 {
		errs.add(file, f.line(toml.Key{"tools"}), "use a positive number or leave it out for the default", "tools.max_output_chars and tools.max_body_bytes must not be negative")
	}
	for name, rl := range c.Tools.RateLimits {
		checkRateLimit(name, rl, file, func(k string) int { return f.line(toml.Key{"tools", "rate_limits", name, k}) }, errs)
		if rl.RPM == 0 && rawHas(f.raw, "tools", "rate_limits", name, "rpm") {
			errs.add(file, f.line(toml.Key{"tools", "rate_limits", name, "rpm"}),
				"write rpm = -1 for no limit, or leave rpm out for the default",
				"tools.rate_limits.%s.rpm = 0 would let no call through", name)
		}
	}
	if c.Instructions.MaxBytes < 0 {
		errs.add(file, f.line(toml.Key{"instructions", "max_bytes"}), "use a positive number of bytes, or leave it out for the default (32768)", "instructions.max_bytes must not be negative")
	}
	if c.Instructions.Fallback != nil {
		for _, name := range *c.Instructions.Fallback {
			if name == "" || strings.ContainsAny(name, `/\`) {
				errs.add(file, f.line(toml.Key{"instructions", "fallback"}), `give file names such as "CLAUDE.md", without a directory`, "instructions.fallback: %q is not a file name", name)
			}
		}
	}
	if hosts := c.Sandbox.Commands.NetworkHosts(); len(hosts) > 0 {
		errs.add(file, f.line(toml.Key{"sandbox", "commands", "network"}),
			"write network = true for any host or false for none; a host list is a server's (its sandbox table), whose proxy otter runs",
			"sandbox.commands.network lists hosts (%s): the commands the model runs cannot be held to a list", strings.Join(hosts, ", "))
	}
	if c.Serve.MaxSessions < 0 {
		errs.add(file, f.line(toml.Key{"serve", "max_sessions"}), "use a positive number, or leave it out for the default (1000)", "serve.max_sessions must not be negative")
	}
	if c.Serve.MaxSessionsPerKey < 0 {
		errs.add(file, f.line(toml.Key{"serve", "max_sessions_per_key"}), "use a positive number, or leave it out for the default (100)", "serve.max_sessions_per_key must not be negative")
	}
	if v := c.Serve.Store.OnStoreError; v != "" && v != "deny" && v != "local" {
		errs.add(file, f.line(toml.Key{"serve", "store", "on_store_error"}), `write "deny" (refuse calls while the store is unreachable) or "local" (fall back to this process's own limits)`,
			"serve.store.on_store_error = %q is neither \"deny\" nor \"local\"", v)
	}
	if tz := c.Serve.QuotaTimezone; tz != "" {
		if _, err := time.LoadLocation(tz); err != nil {
			errs.add(file, f.line(toml.Key{"serve", "quota_timezone"}), `write an IANA zone name such as "Europe/Berlin", or leave it out for UTC`,
				"serve.quota_timezone = %q is not a time zone: %v", tz, err)
		}
	}
	if c.Serve.MaxConnections < 0 {
		errs.add(file, f.line(toml.Key{"serve", "max_connections"}), "use a positive number, or leave it out for the default (10000, or less under a low file limit)", "serve.max_connections must not be negative")
	}
	for _, cidr := range c.Tools.AllowPrivateNetworks {
		if _, _, err := net.ParseCIDR(cidr); err != nil {
			errs.add(file, f.line(toml.Key{"tools", "allow_private_networks"}), `write a CIDR such as "10.0.0.0/8" or "192.168.1.5/32"`,
				"tools.allow_private_networks: %q is not a CIDR", cidr)
		}
	}
	for pattern, decision := range c.Permissions {
		line := f.line(toml.Key{"permissions", pattern})
		if !ValidGlob(pattern) {
			errs.add(file, line, GlobHint, "permissions: bad glob pattern %q", pattern)
		}
		if name, spec, ok := strings.Cut(pattern, "("); ok {
			if name != "run_command" || !strings.HasSuffix(spec, ")") || strings.TrimSpace(strings.TrimSuffix(spec, ")")) == "" {
				errs.add(file, line, `only run_command takes what follows it in parentheses: a command, or a prefix ending in ":*", as in "run_command(git status:*)" (Claude Code's Bash(…) is otter's run_command(…))`,
					"permissions: %q is not a rule otter reads", pattern)
			}
		}
		if !validDecision(decision) {
			errs.add(file, line, `use "allow", "ask" or "deny"`, "permissions: %q has unknown decision %q", pattern, decision)
		}
	}
}

// checkLimits validates the context_window and max_output_tokens of the
// table at key.
func (f *fileData) checkLimits(errs *errList, key toml.Key, l ModelLimits) {
	file := f.src.Path
	for _, v := range []struct {
		name string
		n    int
	}{{"context_window", l.ContextWindow}, {"max_output_tokens", l.MaxOutputTokens}} {
		if v.n < 0 || (v.n == 0 && rawHas(f.raw, append(key[:len(key):len(key)], v.name)...)) {
			errs.add(file, f.line(append(key[:len(key):len(key)], v.name)), "write the model's limit in tokens, e.g. 32768, or leave the key out",
				"%s.%s must be a positive number of tokens", key.String(), v.name)
		}
	}
	if l.ContextWindow > 0 && l.MaxOutputTokens >= l.ContextWindow {
		errs.add(file, f.line(append(key[:len(key):len(key)], "max_output_tokens")), "the answer shares the window with the conversation: max_output_tokens must be smaller than context_window",
			"%s: max_output_tokens %d is not smaller than context_window %d", key.String(), l.MaxOutputTokens, l.ContextWindow)
	}
}

func validDecision(d string) bool { return d == "allow" || d == "ask" || d == "deny" }

// checkServerValues validates the fields of one entry; lineOf gives the
// line of a key inside it.
func checkServerValues(s Server, file string, lineOf func(k ...string) int, errs *errList) {
	who := fmt.Sprintf("server %q", s.Name)
	switch strings.ToLower(s.Transport) {
	case "", TransportStdio, TransportHTTP, TransportSSE, TransportAuto:
		if s.Transport != strings.ToLower(s.Transport) {
			errs.add(file, lineOf("transport"), fmt.Sprintf("write %q in lower case", strings.ToLower(s.Transport)), "%s: bad transport %q", who, s.Transport)
		}
	case "streamable-http", "streamable_http", "streamablehttp", "http-stream":
		errs.add(file, lineOf("transport"), `write transport = "http" for streamable HTTP`, "%s: bad transport %q", who, s.Transport)
	default:
		errs.add(file, lineOf("transport"), `use "stdio" (a local command), "http" (streamable HTTP), "sse" (legacy HTTP+SSE) or "auto" (HTTP, falling back to SSE), or leave it out to infer it from command/url`,
			"%s: bad transport %q", who, s.Transport)
	}
	if s.StartupTimeout.Duration < 0 {
		errs.add(file, lineOf("startup_timeout"), `use a positive duration such as "30s"`, "%s: startup_timeout must not be negative", who)
	}
	if s.Timeout.Duration < 0 {
		errs.add(file, lineOf("timeout"), `use a positive duration such as "5m"`, "%s: timeout must not be negative", who)
	}
	checkIdleTimeout(s.IdleTimeout.Duration, who+": idle_timeout", file, lineOf("idle_timeout"), errs)
	for _, list := range []struct {
		key      string
		patterns []string
	}{{"allowed_tools", s.AllowedTools}, {"denied_tools", s.DeniedTools}} {
		for _, p := range list.patterns {
			if !ValidGlob(p) {
				errs.add(file, lineOf(list.key), GlobHint, "%s: bad glob pattern %q in %s", who, p, list.key)
			}
		}
	}
	if s.OAuth != nil {
		checkOAuthValues(s.OAuth, who, file, lineOf, errs)
	}
	for _, h := range s.Sandbox.NetworkHosts() {
		if err := sandbox.CheckHost(h); err != nil {
			errs.add(file, lineOf("sandbox", "network"),
				`list host names, such as network = ["api.github.com", "*.example.org"]; write network = true for any host, false for none`,
				"%s: sandbox.network: %v", who, err)
		}
	}
}

// MinIdleTimeout is the shortest idle_timeout: a server stopped sooner
// would be started again for the next step of the same turn.
const MinIdleTimeout = time.Second

// checkIdleTimeout refuses an idle_timeout that is negative or too short
// to keep a server for a turn.
func checkIdleTimeout(d time.Duration, what, file string, line int, errs *errList) {
	hint := fmt.Sprintf(`use a duration of %s or more, such as "10m", or leave it out to keep a started server running`, MinIdleTimeout)
	switch {
	case d < 0:
		errs.add(file, line, hint, "%s must not be negative", what)
	case d > 0 && d < MinIdleTimeout:
		errs.add(file, line, hint, "%s = %s is too short: a server that started when it was needed would stop again between two steps of a turn", what, d)
	}
}

// checkOAuthValues validates the values of one [mcp.servers.oauth] as
// written in one file; rules that span scopes are in checkOAuth.
func checkOAuthValues(o *OAuth, who, file string, lineOf func(k ...string) int, errs *errList) {
	if o.CallbackPort < 0 || o.CallbackPort > 65535 {
		errs.add(file, lineOf("oauth", "callback_port"), "use a port between 1 and 65535, or 0 for any free port", "%s: bad oauth.callback_port %d", who, o.CallbackPort)
	}
	switch o.Grant {
	case "", GrantAuthorizationCode, GrantClientCredentials:
	default:
		hint := fmt.Sprintf("use %q (a person logs in in a browser; the default) or %q (a machine client with its own credentials)", GrantAuthorizationCode, GrantClientCredentials)
		if g := suggest(o.Grant, []string{GrantAuthorizationCode, GrantClientCredentials}); g != "" {
			hint = fmt.Sprintf("did you mean %q? %s", g, hint)
		}
		errs.add(file, lineOf("oauth", "grant"), hint, "%s: unknown oauth.grant %q", who, o.Grant)
	}
	if o.SigningAlg != "" && !slices.Contains(SigningAlgs, o.SigningAlg) {
		errs.add(file, lineOf("oauth", "signing_alg"), "use one of "+strings.Join(SigningAlgs, ", ")+", or leave it out to use the usual one for the key",
			"%s: unsupported oauth.signing_alg %q", who, o.SigningAlg)
	}
	if o.PrivateKeyFile != "" && o.PrivateKeyPEM != "" {
		errs.add(file, lineOf("oauth", "private_key_pem"), "keep one of them", "%s: oauth sets both private_key_file and private_key_pem", who)
	}
}

// FileServers returns the servers one file defines, as written: no other
// scope, no ${VAR} expansion, no defaults, no trust check. Problems are
// *Error values as in Load.
func FileServers(p string) ([]Server, error) {
	f, errs := readConfigFile(p, ScopeFlag, missingFileHint)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := make([]Server, len(f.servers))
	for i, s := range f.servers {
		out[i] = s.srv
	}
	return out, nil
}

// rawHas reports whether the nested tables of raw set the key path.
func rawHas(raw map[string]any, path ...string) bool {
	var cur any = raw
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// checkRateLimit validates one [tools.rate_limits.TOOL] table: the checks
// the web-data tools make when they start, made here too so that `otter
// config validate` refuses what every other command refuses, at its line.
func checkRateLimit(name string, rl RateLimit, file string, lineOf func(key string) int, errs *errList) {
	if !slices.Contains(RateLimitedTools, name) {
		hint := "the built-in tools are " + strings.Join(RateLimitedTools, ", ") + "; an MCP server's tools have no otter rate limit"
		if s := suggest(name, RateLimitedTools); s != "" {
			hint = fmt.Sprintf("did you mean %q? %s", s, hint)
		}
		errs.add(file, lineOf(""), hint, "[tools.rate_limits.%s]: no built-in tool has that name", name)
		return
	}
	if math.IsNaN(rl.RPM) || math.IsInf(rl.RPM, 1) {
		errs.add(file, lineOf("rpm"), "write calls per minute, or rpm = -1 for no limit",
			"tools.rate_limits.%s.rpm = %g is not a rate", name, rl.RPM)
	}
	if rl.Burst < 0 {
		errs.add(file, lineOf("burst"), "write how many calls may come at once, at least 1, or leave burst out for the default",
			"tools.rate_limits.%s.burst = %d is not a number of calls", name, rl.Burst)
	}
}

// placeHooks records the file and line of each hook command: its
// [[hooks.EVENT.hooks]] header, else its group's [[hooks.EVENT]].
func (f *fileData) placeHooks() {
	for ev, groups := range f.cfg.Hooks {
		k := 0 // the n-th [[hooks.EVENT.hooks]] header of the file
		for gi := range groups {
			gline, _, _ := f.ix.nth(toml.Key{"hooks", ev}.String(), gi)
			for hi := range groups[gi].Hooks {
				h := &groups[gi].Hooks[hi]
				l, _, _ := f.ix.nth(toml.Key{"hooks", ev, "hooks"}.String(), k)
				k++
				h.File, h.Line = f.src.Path, cmp.Or(l, gline)
			}
		}
	}
}

// checkHooks refuses an event otter does not know, a matcher that is not a
// regular expression, a hook of another type than "command" or without a
// command, and a negative timeout.
func (f *fileData) checkHooks(errs *errList) {
	file := f.src.Path
	for _, ev := range slices.Sorted(maps.Keys(f.cfg.Hooks)) {
		line := f.line(toml.Key{"hooks", ev})
		if !hooks.Event(ev).Valid() {
			errs.add(file, line, "the events are "+hookEventNames(), "hooks.%s is not an event otter runs hooks for", ev)
			continue
		}
		for _, g := range f.cfg.Hooks[ev] {
			if g.Matcher != "" && g.Matcher != "*" {
				if _, err := regexp.Compile(g.Matcher); err != nil {
					errs.add(file, line, "write a regular expression such as \"mcp__github__.*\"", "hooks.%s: matcher %q is not a regular expression: %v", ev, g.Matcher, err)
				}
			}
			if len(g.Hooks) == 0 {
				errs.add(file, line, "add a [[hooks."+ev+".hooks]] entry with type = \"command\" and command = \"…\"", "hooks.%s: a group has no hooks", ev)
			}
			for _, h := range g.Hooks {
				switch {
				case h.Type != "command":
					errs.add(file, cmp.Or(h.Line, line), "otter runs hooks of type = \"command\"", "hooks.%s: hook type %q is not supported", ev, h.Type)
				case strings.TrimSpace(h.Command) == "":
					errs.add(file, cmp.Or(h.Line, line), "set command to the shell command to run", "hooks.%s: a hook has no command", ev)
				case h.Timeout < 0:
					errs.add(file, cmp.Or(h.Line, line), "give the timeout in seconds, or leave it out for 60", "hooks.%s: timeout must not be negative", ev)
				}
			}
		}
	}
}

func hookEventNames() string {
	names := make([]string, len(hooks.Events))
	for i, e := range hooks.Events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// validThinking reports whether s is a [providers] thinking setting: a
// level, or a budget the Messages API accepts (at least 1,024 tokens).
func validThinking(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "off", "none", "low", "medium", "high":
		return true
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return err == nil && n >= 1024
}
