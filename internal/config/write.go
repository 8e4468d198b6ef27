package config

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/otter-sh/otter/internal/secret"
)

// WriteServersTOML writes servers as [[mcp.servers]] entries that Load
// reads back to the same servers. Only fields that are set are written;
// Scope, File, Line and DisabledReason are not.
func WriteServersTOML(w io.Writer, servers []Server) error {
	bw := bufio.NewWriter(w)
	for i, s := range servers {
		if i > 0 {
			bw.WriteString("\n")
		}
		if err := writeServer(bw, s); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeServer writes one [[mcp.servers]] entry; maps become inline tables
// and oauth a [mcp.servers.oauth] sub-table.
func writeServer(w *bufio.Writer, s Server) error {
	w.WriteString("[[mcp.servers]]\n")
	v := reflect.ValueOf(s)
	t := v.Type()
	var oauth *OAuth
	for i := range t.NumField() {
		name := tomlName(t.Field(i))
		fv := v.Field(i)
		if name == "" || fv.IsZero() {
			continue
		}
		if o, ok := fv.Interface().(*OAuth); ok {
			oauth = o
			continue
		}
		val, err := tomlValue(fv.Interface())
		if err != nil {
			return fmt.Errorf("server %q: %s: %w", s.Name, name, err)
		}
		fmt.Fprintf(w, "%s = %s\n", tomlKey(name), val)
	}
	if oauth != nil {
		w.WriteString("[mcp.servers.oauth]\n")
		var b bytes.Buffer
		if err := toml.NewEncoder(&b).Encode(oauth); err != nil {
			return fmt.Errorf("server %q: oauth: %w", s.Name, err)
		}
		w.Write(b.Bytes())
	}
	return nil
}

// tomlValue renders one value in TOML; maps of strings and a sandbox
// table become inline tables.
func tomlValue(v any) (string, error) {
	if sb, ok := v.(*ServerSandbox); ok {
		return sandboxTOML(sb)
	}
	if n, ok := v.(*SandboxNetwork); ok {
		b, err := n.MarshalTOML()
		return string(b), err
	}
	if m, ok := v.(map[string]any); ok { // a table read from a file, inline
		parts := make([]string, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			val, err := tomlValue(m[k])
			if err != nil {
				return "", err
			}
			parts = append(parts, tomlKey(k)+" = "+val)
		}
		return "{ " + strings.Join(parts, ", ") + " }", nil
	}
	if m, ok := v.(map[string]string); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			val, err := tomlValue(m[k])
			if err != nil {
				return "", err
			}
			parts[i] = tomlKey(k) + " = " + val
		}
		return "{ " + strings.Join(parts, ", ") + " }", nil
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimPrefix(b.String(), "v = "), "\n"), nil
}

// sandboxTOML writes a server's sandbox table inline, as people write it:
// sandbox = { write = ["/data"], network = ["api.github.com"] }.
func sandboxTOML(sb *ServerSandbox) (string, error) {
	v := reflect.ValueOf(*sb)
	var parts []string
	for i := range v.NumField() {
		name, fv := tomlName(v.Type().Field(i)), v.Field(i)
		if name == "" || fv.IsZero() || fv.Kind() == reflect.Slice && fv.Len() == 0 {
			continue
		}
		val, err := tomlValue(fv.Interface())
		if err != nil {
			return "", fmt.Errorf("sandbox.%s: %w", name, err)
		}
		parts = append(parts, tomlKey(name)+" = "+val)
	}
	return "{ " + strings.Join(parts, ", ") + " }", nil
}

// tomlKey quotes a key unless it is bare.
func tomlKey(k string) string { return toml.Key{k}.String() }

// WriteResolved writes the resolved configuration as TOML for
// `otter config show`: the files read, then every table, each server with
// a comment naming its scope and file (and why it is disabled or cannot
// start: a "# problem:" line per Problem), a "# problem:" line per
// provider Problem, and every secret masked (see maskSecret).
func (c *Config) WriteResolved(w io.Writer) error {
	m := c.masked()
	bw := bufio.NewWriter(w)
	bw.WriteString("# Resolved otter configuration (secrets masked).\n")
	if len(m.Files) == 0 {
		bw.WriteString("# No config file was found; these are the defaults.\n")
	} else {
		bw.WriteString("# Files read, lowest scope first:\n")
		for _, f := range m.Files {
			note := ""
			if !f.Trusted {
				note = " (untrusted: its servers are disabled and its other settings ignored)"
			}
			fmt.Fprintf(bw, "#   %-7s %s%s\n", f.Scope, f.Path, note)
		}
	}
	bw.WriteString("\n")
	mcp := m.MCP
	mcp.Servers = nil
	if err := encodeTOML(bw, struct {
		MCP MCP `toml:"mcp"`
	}{mcp}); err != nil {
		return err
	}
	for _, s := range m.MCP.Servers {
		fmt.Fprintf(bw, "\n# %s: %s scope, %s:%d\n", s.Name, s.Scope, s.File, s.Line)
		if s.DisabledReason != "" {
			fmt.Fprintf(bw, "# disabled: %s\n", s.DisabledReason)
		} else if !s.IsEnabled() {
			bw.WriteString("# disabled: enabled = false\n")
		}
		if s.Problem != nil {
			for l := range strings.Lines(s.Problem.Error()) {
				fmt.Fprintf(bw, "# problem: %s\n", strings.TrimSuffix(l, "\n"))
			}
		}
		if err := writeServer(bw, s); err != nil {
			return err
		}
	}
	bw.WriteString("\n")
	for _, name := range slices.Sorted(maps.Keys(m.Providers)) {
		if p := m.Providers[name].Problem; p != nil {
			for l := range strings.Lines(p.Error()) {
				fmt.Fprintf(bw, "# problem: [providers.%s]: %s\n", tomlKey(name), strings.TrimSuffix(l, "\n"))
			}
		}
	}
	if err := encodeTOML(bw, struct {
		Agent       Agent               `toml:"agent,omitempty"`
		Providers   map[string]Provider `toml:"providers,omitempty"`
		Tools       Tools               `toml:"tools,omitempty"`
		Serve       Serve               `toml:"serve,omitempty"`
		Permissions map[string]string   `toml:"permissions,omitempty"`
	}{m.Agent, m.Providers, m.Tools, m.Serve, m.Permissions}); err != nil {
		return err
	}
	return bw.Flush()
}

func encodeTOML(w io.Writer, v any) error {
	enc := toml.NewEncoder(w)
	enc.Indent = ""
	return enc.Encode(v)
}

// masked returns a copy of c with every secret masked.
func (c *Config) masked() *Config {
	m := *c
	if m.MCP.Enabled == nil {
		on := true
		m.MCP.Enabled = &on
	}
	m.MCP.Servers = make([]Server, len(c.MCP.Servers))
	for i, s := range c.MCP.Servers {
		s.Headers = maskMap(s.Headers, func(string) bool { return true })
		s.Env = maskMap(s.Env, secretName)
		s.Args = maskArgs(s.Args)
		s.URL = maskURL(s.URL)
		if s.OAuth != nil {
			o := *s.OAuth
			o.ClientSecret = maskSecret(o.ClientSecret)
			o.PrivateKeyPEM = maskSecret(o.PrivateKeyPEM)
			s.OAuth = &o
		}
		m.MCP.Servers[i] = s
	}
	if c.Providers != nil {
		m.Providers = make(map[string]Provider, len(c.Providers))
		for name, p := range c.Providers {
			p.APIKey = maskSecret(p.APIKey)
			p.Headers = maskMap(p.Headers, func(string) bool { return true })
			p.BaseURL = maskURL(p.BaseURL)
			m.Providers[name] = p
		}
	}
	m.Serve.Store.URL = secret.MaskDSN(c.Serve.Store.URL) // a password may hold an unescaped /
	if c.Serve.APIKeys != nil {
		m.Serve.APIKeys = make([]string, len(c.Serve.APIKeys))
		for i, k := range c.Serve.APIKeys {
			m.Serve.APIKeys[i] = maskSecret(k)
		}
	}
	return &m
}

// maskSecret hides a secret whole: "****". (Showing its last four
// characters would tell an attacker a part of it; which key is set is
// better told by its ${VAR} in the file.)
func maskSecret(s string) string {
	if s == "" {
		return ""
	}
	return "****"
}

// secretName reports whether an environment variable or flag name looks
// like it holds a secret.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL", "COOKIE", "SESSION"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func maskMap(m map[string]string, secret func(string) bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if secret(k) {
			v = maskSecret(v)
		} else {
			v = maskInValue(v)
		}
		out[k] = v
	}
	return out
}

// maskArgs masks the values of secret-looking flags: "--token X" and
// "--api-key=X".
func maskArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := slices.Clone(args)
	for i, a := range out {
		out[i] = maskInValue(a)
	}
	flagSecrets(args, func(i int, prefix, _ string) { out[i] = prefix + maskSecret(args[i][len(prefix):]) })
	return out
}

// flagSecrets calls f for each value of a secret-looking flag in args:
// "--token X" (f(i+1, "", X)) and "--api-key=X" (f(i, "--api-key=", X)).
func flagSecrets(args []string, f func(i int, prefix, val string)) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if name, val, ok := strings.Cut(a, "="); ok {
			if secretName(name) {
				f(i, name+"=", val)
			}
			continue
		}
		if secretName(a) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			f(i+1, "", args[i+1])
		}
	}
}

// tokenPrefixes begin well-known kinds of API tokens.
var tokenPrefixes = []string{"sk-", "sk_live_", "xoxb-", "xoxp-", "xoxa-", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "AKIA"}

// maskInValue masks what gives itself away as a secret in a value whose
// name does not: a password inside a URL or connection string
// ("postgres://u:pw@h/db", also after "--db="), a Bearer or Basic
// credential ("Authorization: Bearer TOKEN", as mcp-remote's --header
// takes it) and a well-known token.
func maskInValue(v string) string {
	v = secret.MaskCredentials(v)
	if strings.Contains(v, "://") {
		if i := strings.Index(v, "="); i > 0 && i < strings.Index(v, "://") {
			return v[:i+1] + maskURL(v[i+1:])
		}
		return maskURL(v)
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+8 {
			return maskSecret(v)
		}
	}
	return v
}

// maskURL masks a URL's userinfo and the values of its secret-named
// query parameters, keeping the rest as written (see secret.MaskURL).
func maskURL(s string) string { return secret.MaskURL(s) }
