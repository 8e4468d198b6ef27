package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/otter-sh/otter/internal/toolname"
)

// resolver merges parsed files into one Config.
type resolver struct {
	paths   Paths
	workDir string
	projDir string
	lookup  func(string) (string, bool)
}

// origin is where a value was set.
type origin struct {
	file string
	line int
	rank int // the file's place in the merge: a higher rank overrides a lower
}

// mergedServer is a server while its scopes are merged.
type mergedServer struct {
	srv       Server
	origins   map[string]origin // by key path inside the entry
	rank      int               // rank of the last file that defines it (see origin)
	untrusted bool              // some file that defines it is untrusted
	held      bool              // some entry of it changed since the project was trusted
	invalid   string            // why a lenient .mcp.json entry cannot run
	// unexpanded holds the key paths (as toml.Key.String) whose ${VAR}
	// references could not be expanded; their text is kept as written.
	unexpanded map[string]bool
}

// origin returns where key (a path inside the server) was set, falling back
// to its parent keys and then to the server's entry.
func (m *mergedServer) origin(key toml.Key) origin {
	for p := key; len(p) > 0; p = p[:len(p)-1] {
		if o, ok := m.origins[p.String()]; ok {
			return o
		}
	}
	return origin{file: m.srv.File, line: m.srv.Line, rank: m.rank}
}

func (r *resolver) resolve(files []*fileData) (*Config, error) {
	if r.lookup == nil {
		r.lookup = os.LookupEnv
	}
	cfg := &Config{Project: r.projDir}
	top := map[string]origin{}
	var servers []*mergedServer
	byName := map[string]*mergedServer{}
	shadowed := trustedServers(files)
	for rank, f := range files {
		cfg.Files = append(cfg.Files, f.src)
		if f.src.Trusted {
			addHooks(cfg, f) // less those held back (projectTrust)
		}
		if f.src.Trusted && !f.heldSettings {
			overlay(reflect.ValueOf(cfg).Elem(), reflect.ValueOf(&f.cfg).Elem(), f.raw, nil, func(p toml.Key) {
				top[p.String()] = origin{f.src.Path, f.line(p), rank}
			})
		}
		for _, fs := range f.servers {
			untrusted := !f.src.Trusted || fs.held
			if untrusted && shadowed[fs.srv.Name] {
				continue // a trusted scope defines this server; the untrusted entry must not change it
			}
			m := byName[fs.srv.Name]
			if m == nil {
				m = &mergedServer{origins: map[string]origin{}}
				byName[fs.srv.Name] = m
				servers = append(servers, m)
			}
			overlay(reflect.ValueOf(&m.srv).Elem(), reflect.ValueOf(&fs.srv).Elem(), fs.raw, nil, func(p toml.Key) {
				m.origins[p.String()] = origin{f.src.Path, f.serverLine(fs, p), rank}
			})
			m.srv.Scope, m.srv.File, m.srv.Line, m.rank = fs.srv.Scope, fs.srv.File, fs.srv.Line, rank
			if !f.src.Trusted {
				m.untrusted = true
			} else if fs.held {
				m.held = true
			}
			if fs.srv.DisabledReason != "" {
				m.invalid = fs.srv.DisabledReason
			}
		}
	}

	var errs errList
	for _, m := range servers {
		s := &m.srv
		switch {
		case m.invalid != "":
			s.DisabledReason = m.invalid
		case m.untrusted:
			s.Untrusted = true
			s.DisabledReason = fmt.Sprintf("not started: the project directory %s is not trusted yet; trusting it lets its servers start", r.projDir)
		case m.held:
			s.Untrusted = true
			s.DisabledReason = fmt.Sprintf("not started: its entry was added or changed since you trusted the project directory %s; trusting it again lets it start", r.projDir)
		}
		// A server's expansion errors stay with that server (its Problem):
		// they stop it alone, not the whole configuration.
		var problems errList
		r.expandServer(m, &problems)
		r.finishServer(m, byName, &errs)
		switch len(problems) {
		case 0:
		case 1:
			s.Problem = problems[0]
		default:
			s.Problem = errors.Join(problems...)
		}
		cfg.MCP.Servers = append(cfg.MCP.Servers, *s)
	}
	cfg.Warnings = append(cfg.Warnings, prefixClashes(cfg.MCP.Servers)...)
	r.expandTop(cfg, top, &errs)
	r.defaults(cfg, top)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// prefixClashes warns about enabled servers whose names normalise to the
// same tool-name prefix (my.srv and my_srv both give mcp__my_srv__): a tool
// name they have in common is offered from one of them only, the one whose
// name sorts first (see the tool Set). Each warning points at the entry of the
// last server of a group, the one a person most likely added last.
func prefixClashes(servers []Server) []*Error {
	byPrefix := map[string][]Server{}
	var order []string
	for _, s := range servers {
		if s.Enabled != nil && !*s.Enabled {
			continue // it offers no tools
		}
		p := toolname.Prefix(s.Name)
		if len(byPrefix[p]) == 0 {
			order = append(order, p)
		}
		byPrefix[p] = append(byPrefix[p], s)
	}
	var out []*Error
	for _, p := range order {
		group := byPrefix[p]
		if len(group) < 2 {
			continue
		}
		last := group[len(group)-1]
		names := make([]string, len(group))
		winner := group[0].Name
		for i, s := range group {
			names[i] = fmt.Sprintf("%q", s.Name)
			if s.File != last.File {
				names[i] += fmt.Sprintf(" (%s:%d)", s.File, s.Line)
			} else if i < len(group)-1 && s.Line > 0 {
				names[i] += fmt.Sprintf(" (line %d)", s.Line)
			}
			winner = min(winner, s.Name)
		}
		out = append(out, &Error{File: last.File, Line: last.Line,
			Msg: fmt.Sprintf("servers %s share the tool prefix %s; a tool name they have in common is offered from %q only",
				strings.Join(names, " and "), p, winner),
			Hint: "rename one of them"})
	}
	return out
}

// trustedServers returns the names of the servers that trusted files
// define completely (with a command or a url). An untrusted project file
// neither changes nor disables those; it only adds servers of its own,
// disabled until trusted (also when a trusted file overrides some of their
// fields, as a local file may).
func trustedServers(files []*fileData) map[string]bool {
	merged := map[string]*Server{}
	for _, f := range files {
		if !f.src.Trusted {
			continue
		}
		for _, fs := range f.servers {
			if fs.held {
				continue
			}
			s := merged[fs.srv.Name]
			if s == nil {
				s = &Server{}
				merged[fs.srv.Name] = s
			}
			overlay(reflect.ValueOf(s).Elem(), reflect.ValueOf(&fs.srv).Elem(), fs.raw, nil, func(toml.Key) {})
		}
	}
	complete := map[string]bool{}
	for name, s := range merged {
		complete[name] = s.Command != "" || s.URL != ""
	}
	return complete
}

// overlay copies into dst the fields of src that raw says were set,
// recursing into tables (structs, pointers to structs, maps of structs) and
// merging maps key by key, and calls set with the path of every value it
// copies. Fields of type []Server are left to the caller.
func overlay(dst, src reflect.Value, raw map[string]any, prefix toml.Key, set func(toml.Key)) {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := tomlName(f)
		if name == "" || f.Type == reflect.TypeFor[[]Server]() || f.Type == reflect.TypeFor[map[string][]HookGroup]() {
			continue // merged on their own: see resolve
		}
		rv, ok := raw[name]
		if !ok {
			continue
		}
		sub, _ := rv.(map[string]any)
		p := append(prefix[:len(prefix):len(prefix)], name)
		dv, sv := dst.Field(i), src.Field(i)
		switch {
		case isValueType(f.Type):
			dv.Set(sv)
			set(p)
		case f.Type.Kind() == reflect.Struct:
			overlay(dv, sv, sub, p, set)
		case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
			if sv.IsNil() {
				continue
			}
			if dv.IsNil() {
				dv.Set(reflect.New(f.Type.Elem()))
			}
			overlay(dv.Elem(), sv.Elem(), sub, p, set)
		case f.Type.Kind() == reflect.Map:
			if sv.IsNil() {
				continue
			}
			if dv.IsNil() {
				dv.Set(reflect.MakeMap(f.Type))
			}
			elem := f.Type.Elem()
			for _, k := range sv.MapKeys() {
				kp := append(p[:len(p):len(p)], k.String())
				if elem.Kind() == reflect.Struct && !isValueType(elem) {
					cur := reflect.New(elem).Elem()
					if old := dv.MapIndex(k); old.IsValid() {
						cur.Set(old)
					}
					ksub, _ := sub[k.String()].(map[string]any)
					overlay(cur, sv.MapIndex(k), ksub, kp, set)
					dv.SetMapIndex(k, cur)
					continue
				}
				dv.SetMapIndex(k, sv.MapIndex(k))
				set(kp)
			}
		default:
			dv.Set(sv)
			set(p)
		}
	}
}

// rawFromValue lists the non-empty fields of a struct the way a generic
// TOML decode of it would, for overlay (used for .mcp.json entries).
func rawFromValue(v any) map[string]any {
	return rawFromReflect(reflect.ValueOf(v))
}

func rawFromReflect(v reflect.Value) map[string]any {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	out := map[string]any{}
	t := v.Type()
	for i := range t.NumField() {
		name := tomlName(t.Field(i))
		fv := v.Field(i)
		if name == "" || fv.IsZero() {
			continue
		}
		switch {
		case !isValueType(fv.Type()) && (fv.Kind() == reflect.Struct || fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct):
			out[name] = rawFromReflect(fv)
		case fv.Kind() == reflect.Map:
			m := map[string]any{}
			for _, k := range fv.MapKeys() {
				m[k.String()] = true
			}
			out[name] = m
		default:
			out[name] = true
		}
	}
	return out
}

// expand expands one string at origin o, recording an error unless quiet.
func (r *resolver) expand(v string, o origin, quiet bool, errs *errList, describe func(*varError) (msg, hint string)) string {
	out, err := expandVars(v, r.lookup)
	if err == nil {
		return out
	}
	if !quiet {
		var ve *varError
		errors.As(err, &ve)
		msg, hint := describe(ve)
		errs.add(o.file, o.line, hint, "%s", msg)
	}
	return v
}

// expandServer expands ${VAR} references in a server, recording each
// failure in errs and its key in m.unexpanded; the text of a failed value is
// kept as written. For servers that do not start (disabled or untrusted)
// failures are not recorded.
func (r *resolver) expandServer(m *mergedServer, errs *errList) {
	s := &m.srv
	quiet := (s.Enabled != nil && !*s.Enabled) || s.DisabledReason != ""
	do := func(v string, key toml.Key) string {
		o := m.origin(key)
		disable := "enabled = false"
		if strings.EqualFold(filepath.Ext(o.file), ".json") {
			disable = `"disabled": true` // the .mcp.json way
		}
		n := len(*errs)
		out := r.expand(v, o, quiet, errs, func(ve *varError) (string, string) {
			return fmt.Sprintf("server %q: %s (in %s)", s.Name, ve.Error(), key.String()), ve.hint(disable)
		})
		if len(*errs) > n {
			if m.unexpanded == nil {
				m.unexpanded = map[string]bool{}
			}
			m.unexpanded[key.String()] = true
		}
		return out
	}
	s.Command = do(s.Command, toml.Key{"command"})
	if s.Args != nil {
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = do(a, toml.Key{"args"})
		}
		s.Args = args
	}
	s.Env = expandMap(s.Env, func(k, v string) string { return do(v, toml.Key{"env", k}) })
	s.Cwd = do(s.Cwd, toml.Key{"cwd"})
	if s.Roots != nil {
		roots := make([]string, len(s.Roots))
		for i, d := range s.Roots {
			roots[i] = do(d, toml.Key{"roots"})
		}
		s.Roots = roots
	}
	if s.Sandbox != nil {
		sb := *s.Sandbox
		expand := func(paths []string, key string) []string {
			out := make([]string, len(paths))
			for i, p := range paths {
				out[i] = do(p, toml.Key{"sandbox", key})
			}
			return out
		}
		sb.Read, sb.Write = expand(sb.Read, "read"), expand(sb.Write, "write")
		s.Sandbox = &sb
	}
	s.URL = do(s.URL, toml.Key{"url"})
	s.Headers = expandMap(s.Headers, func(k, v string) string { return do(v, toml.Key{"headers", k}) })
	if s.OAuth != nil {
		o := *s.OAuth
		o.ClientID = do(o.ClientID, toml.Key{"oauth", "client_id"})
		o.ClientSecret = do(o.ClientSecret, toml.Key{"oauth", "client_secret"})
		o.PrivateKeyPEM = do(o.PrivateKeyPEM, toml.Key{"oauth", "private_key_pem"})
		if key := (toml.Key{"oauth", "private_key_file"}); o.PrivateKeyFile != "" {
			o.PrivateKeyFile = absPath(do(o.PrivateKeyFile, key), filepath.Dir(m.origin(key).file))
		}
		s.OAuth = &o
	}
}

// expandMap applies do to every entry of m in key order (so that errors
// come in the same order every time).
func expandMap(m map[string]string, do func(k, v string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[k] = do(k, m[k])
	}
	return out
}

// finishServer infers the transport, checks that the server can run,
// resolves its cwd and applies defaults.
func (r *resolver) finishServer(m *mergedServer, all map[string]*mergedServer, errs *errList) {
	s := &m.srv
	explicitlyOff := s.Enabled != nil && !*s.Enabled
	check := !explicitlyOff && m.invalid == ""
	o := m.origin(toml.Key{"transport"})
	if s.Transport == "" {
		switch {
		case s.Command != "" && s.URL != "":
			if check {
				*errs = append(*errs, bothCommandAndURL(m))
			}
		case s.Command != "":
			s.Transport = TransportStdio
		case s.URL != "":
			s.Transport = TransportHTTP
		}
	}
	if check {
		switch s.Transport {
		case TransportStdio:
			if strings.TrimSpace(s.Command) == "" {
				errs.add(o.file, o.line, `add command = "..." (and args = [...]) to run a local server`, "server %q uses transport stdio but has no command", s.Name)
			}
		case TransportHTTP, TransportSSE, TransportAuto:
			switch u, err := url.Parse(s.URL); {
			case s.URL == "":
				errs.add(o.file, o.line, `add url = "https://..." for the server's endpoint`, "server %q uses transport %s but has no url", s.Name, s.Transport)
			case m.unexpanded["url"]:
				// Its ${VAR} could not be expanded: that is the server's Problem.
			case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
				uo := m.origin(toml.Key{"url"})
				errs.add(uo.file, uo.line, "write an absolute http:// or https:// URL", "server %q: bad url %q", s.Name, s.URL)
			}
		case "":
			if s.Command != "" && s.URL != "" {
				break // "sets both command and url", reported above
			}
			hint := `add command = "..." for a local server or url = "https://..." for a remote one`
			if other := suggest(s.Name, otherNames(all, s.Name)); other != "" {
				hint = fmt.Sprintf("did you mean server %q? An entry that only overrides some fields must use the exact name; otherwise %s", other, hint)
			}
			errs.add(s.File, s.Line, hint, "server %q has neither command nor url", s.Name)
		}
	}
	if check && s.OAuth != nil {
		checkOAuth(m, errs)
	}
	if strings.HasPrefix(s.Command, "~/") {
		s.Command = absPath(s.Command, "")
	}
	base := r.workDir // of a relative cwd or root
	if (s.Scope == ScopeProject || s.Scope == ScopeLocal) && r.projDir != "" {
		base = r.projDir
	}
	if s.Cwd != "" {
		s.Cwd = absPath(s.Cwd, base)
	}
	for i, d := range s.Roots {
		s.Roots[i] = absPath(d, base)
	}
	if s.Sandbox != nil {
		sb := *s.Sandbox
		sb.Read = absPaths(sb.Read, base)
		sb.Write = absPaths(sb.Write, base)
		s.Sandbox = &sb
	}
	if s.StartupTimeout.Duration == 0 {
		s.StartupTimeout.Duration = DefaultStartupTimeout
	}
	if s.Timeout.Duration == 0 {
		s.Timeout.Duration = DefaultTimeout
	}
}

// bothCommandAndURL is the error for a server with both a command and a
// url (and no transport to choose): it says where each was set and to keep
// only one. When a higher scope added one to an entry that had the other,
// it says how that entry drops the inherited one.
func bothCommandAndURL(m *mergedServer) *Error {
	name := m.srv.Name
	co, uo := m.origin(toml.Key{"command"}), m.origin(toml.Key{"url"})
	const which = "command runs a local server, url connects to a remote one"
	if co.file == uo.file {
		return &Error{File: co.file, Line: max(co.line, uo.line),
			Msg:  fmt.Sprintf("server %q sets both command (line %d) and url (line %d)", name, co.line, uo.line),
			Hint: "keep only one: " + which}
	}
	// The higher scope's key is the one a person added over the other.
	at, added, inherited, from := uo, "url", "command", co
	if co.rank > uo.rank {
		at, added, inherited, from = co, "command", "url", uo
	}
	return &Error{File: at.file, Line: at.line,
		Msg: fmt.Sprintf("server %q has both a command and a url: this file sets the %s, %s:%d sets the %s",
			name, added, from.file, from.line, inherited),
		Hint: fmt.Sprintf(`keep only one (%s): to replace the %s of %s, add %s = "" here`, which, inherited, from.file, inherited)}
}

// checkOAuth checks the rules of [mcp.servers.oauth] that span scopes: the
// client_credentials grant needs a client ID and exactly one way for the
// client to authenticate, and a private key is used only by that grant.
func checkOAuth(m *mergedServer, errs *errList) {
	s, o := &m.srv, m.srv.OAuth
	key := o.PrivateKeyFile != "" || o.PrivateKeyPEM != ""
	keyKey := toml.Key{"oauth", "private_key_file"}
	if o.PrivateKeyFile == "" {
		keyKey = toml.Key{"oauth", "private_key_pem"}
	}
	if !o.IsClientCredentials() {
		if key {
			ko := m.origin(keyKey)
			errs.add(ko.file, ko.line, `add grant = "client_credentials" to [mcp.servers.oauth], or remove the key: a browser login authenticates with a client_secret or none`,
				"server %q: a private key (private_key_jwt client authentication) is used only with the client_credentials grant", s.Name)
		}
		return
	}
	g := m.origin(toml.Key{"oauth", "grant"})
	if o.ClientID == "" {
		errs.add(g.file, g.line, `add client_id = "..." as issued by the server's authorization server`,
			"server %q: the client_credentials grant needs oauth.client_id", s.Name)
	}
	switch {
	case !key && o.ClientSecret == "":
		errs.add(g.file, g.line, `add client_secret = "${VAR}" (client_secret_basic/post), or private_key_file = "..." for private_key_jwt`,
			"server %q: the client_credentials grant needs oauth.client_secret or a private key", s.Name)
	case key && o.ClientSecret != "":
		ko := m.origin(keyKey)
		errs.add(ko.file, ko.line, "keep either the client_secret or the private key, whichever the authorization server registered",
			"server %q: oauth sets both client_secret and a private key", s.Name)
	}
}

func otherNames(all map[string]*mergedServer, except string) []string {
	var names []string
	for n := range all {
		if n != except {
			names = append(names, n)
		}
	}
	return names
}

// absPath expands a leading ~/ and makes p absolute against base.
func absPath(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) && base != "" {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// expandTop expands ${VAR} references outside the servers.
func (r *resolver) expandTop(cfg *Config, top map[string]origin, errs *errList) {
	originOf := func(key toml.Key) origin {
		for p := key; len(p) > 0; p = p[:len(p)-1] {
			if x, ok := top[p.String()]; ok {
				return x
			}
		}
		return origin{}
	}
	doInto := func(errs *errList, v string, key toml.Key, quiet bool) string {
		o := originOf(key)
		return r.expand(v, o, quiet, errs, func(ve *varError) (string, string) {
			return fmt.Sprintf("%s (in %s)", ve.Error(), key.String()), ve.hint("")
		})
	}
	do := func(v string, key toml.Key, quiet bool) string { return doInto(errs, v, key, quiet) }
	// A provider's expansion errors stay with that provider (its Problem):
	// only what builds it (-p, the TUI's chat) fails, not mcp list or
	// config show; and another provider may name keys this machine does
	// not have.
	for name, p := range cfg.Providers {
		var problems errList
		do := func(v string, key toml.Key) string { return doInto(&problems, v, key, false) }
		p.APIKey = do(p.APIKey, toml.Key{"providers", name, "api_key"})
		p.BaseURL = do(p.BaseURL, toml.Key{"providers", name, "base_url"})
		p.Headers = expandMap(p.Headers, func(k, v string) string { return do(v, toml.Key{"providers", name, "headers", k}) })
		p.Problem = errors.Join(problems...)
		cfg.Providers[name] = p
	}
	// serve.api_keys matter only to `otter mcp serve --http`: a missing
	// variable there must not stop the TUI, -p or a stdio server, so its
	// error is kept for the serve command and the key left empty (an empty
	// key is refused by serve, never taken as "no auth").
	if cfg.Serve.APIKeys != nil {
		keys := make([]string, len(cfg.Serve.APIKeys))
		cfg.Serve.APIKeySources = make([]string, len(cfg.Serve.APIKeys))
		var keyErrs errList
		o := originOf(toml.Key{"serve", "api_keys"})
		for i, k := range cfg.Serve.APIKeys {
			cfg.Serve.APIKeySources[i] = keySource(k, o)
			n := len(keyErrs)
			keys[i] = doInto(&keyErrs, k, toml.Key{"serve", "api_keys"}, false)
			if len(keyErrs) > n {
				keys[i] = ""
			}
		}
		cfg.Serve.APIKeys = keys
		cfg.Serve.KeysError = errors.Join(keyErrs...)
	}
	cfg.Tools.ExportDir = do(cfg.Tools.ExportDir, toml.Key{"tools", "export_dir"}, false)
	cfg.Serve.AuditLog = do(cfg.Serve.AuditLog, toml.Key{"serve", "audit_log"}, false)
	// Like api_keys, the store matters only to the serve command.
	if u := cfg.Serve.Store.URL; u != "" {
		var urlErrs errList
		cfg.Serve.Store.URL = doInto(&urlErrs, u, toml.Key{"serve", "store", "url"}, false)
		if len(urlErrs) > 0 {
			cfg.Serve.Store.URL = ""
		}
		cfg.Serve.Store.URLError = errors.Join(urlErrs...)
	}
}

// defaults fills in what no file set.
func (r *resolver) defaults(cfg *Config, top map[string]origin) {
	if sb := cfg.Sandbox.Commands; sb != nil {
		c := *sb
		c.Read, c.Write = absPaths(c.Read, r.workDir), absPaths(c.Write, r.workDir)
		cfg.Sandbox.Commands = &c
		// Where it is set: the highest scope that sets it, its first line.
		best := origin{rank: -1}
		for k, o := range top {
			if (k == "sandbox.commands" || strings.HasPrefix(k, "sandbox.commands.")) &&
				(o.rank > best.rank || o.rank == best.rank && o.line < best.line) {
				best = o
			}
		}
		cfg.Sandbox.CommandsFile, cfg.Sandbox.CommandsLine = best.file, best.line
	}
	m := &cfg.MCP
	if m.HealthCheckInterval.Duration == 0 {
		m.HealthCheckInterval.Duration = DefaultHealthCheckInterval
	}
	if _, set := top["mcp.max_reconnect_attempts"]; !set {
		m.MaxReconnectAttempts = DefaultMaxReconnectAttempts
	}
	if m.ReconnectDelay.Duration == 0 {
		m.ReconnectDelay.Duration = DefaultReconnectDelay
	}
	if cfg.Agent.MaxTurns == 0 {
		cfg.Agent.MaxTurns = DefaultMaxTurns
	}
	if cfg.Agent.CompactAt == 0 {
		cfg.Agent.CompactAt = DefaultCompactAt
	}
	for name, p := range cfg.Providers {
		if p.Type == "" && (name == "openai" || name == "anthropic") {
			p.Type = name
			cfg.Providers[name] = p
		}
	}
	t := &cfg.Tools
	if t.MaxOutputChars == 0 {
		t.MaxOutputChars = DefaultMaxOutputChars
	}
	if t.MaxBodyBytes == 0 {
		t.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if t.RespectRobots == nil {
		yes := true
		t.RespectRobots = &yes
	}
	if t.ExportDir == "" {
		t.ExportDir = filepath.Join(r.paths.DataDir, "exports")
	} else {
		t.ExportDir = absPath(t.ExportDir, r.workDir)
	}
	switch cfg.Serve.AuditLog {
	case "":
		cfg.Serve.AuditLog = filepath.Join(r.paths.StateDir, "audit.jsonl")
	case "-":
		// stdout, for a log collector: not a file named "-" in the
		// working directory.
	default:
		cfg.Serve.AuditLog = absPath(cfg.Serve.AuditLog, r.workDir)
	}
}

// Server returns the server called name.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.MCP.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// addHooks appends f's hooks to cfg's: hooks add up across scopes, as
// Claude Code's do, so that a project's hooks run besides the user's.
func addHooks(cfg *Config, f *fileData) {
	for ev, groups := range f.cfg.Hooks {
		if cfg.Hooks == nil {
			cfg.Hooks = map[string][]HookGroup{}
		}
		cfg.Hooks[ev] = append(cfg.Hooks[ev], groups...)
	}
}

// keySource says where a secret written as v at o comes from, without its
// value: the environment variables it names, and the file and line.
func keySource(v string, o origin) string {
	var vars []string
	_, _ = expandVars(v, func(name string) (string, bool) {
		if !slices.Contains(vars, name) {
			vars = append(vars, name)
		}
		return "", true
	})
	where := "written in the file"
	if len(vars) > 0 {
		where = "from $" + strings.Join(vars, ", $")
	}
	if o.file == "" {
		return where
	}
	if o.line > 0 {
		return fmt.Sprintf("%s (%s:%d)", where, o.file, o.line)
	}
	return fmt.Sprintf("%s (%s)", where, o.file)
}

// absPaths is absPath of each of paths (nil stays nil).
func absPaths(paths []string, base string) []string {
	if paths == nil {
		return nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = absPath(p, base)
	}
	return out
}
