package registry

// From a server.json to a [[mcp.servers]] entry. A server offers packages
// (run locally: npm with npx, PyPI with uvx, OCI images with docker run;
// not yet NuGet or MCP bundles) and remotes (streamable HTTP or SSE); Ways lists them and
// Pick chooses one. Params are the values the chosen way needs from the
// person — environment variables, arguments, headers and the variables in
// their templates — and Entry builds the entry from the values given. A
// secret is never written: the entry references an environment variable
// (${VAR}) the person sets. Text from the registry that holds "${" is
// refused, since otter's configuration would expand it from the person's
// environment.

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/otter-sh/otter/internal/config"
)

// Way is one way to run or reach a server: a package or a remote.
type Way struct {
	Remote bool
	Index  int    // in Server.Packages or Server.Remotes
	Kind   string // npm, pypi, oci, nuget, mcpb, …; "remote" for a remote
	// Label names it for a person: "npm @scope/pkg@1.2.3",
	// "remote (streamable-http) https://…".
	Label string
	// Unsupported says why otter cannot use it; "" when it can.
	Unsupported string
}

// Ways lists s's packages, then its remotes, in the server's order.
func (s Server) Ways() []Way {
	var out []Way
	for i, p := range s.Packages {
		w := Way{Index: i, Kind: p.RegistryType, Label: fmt.Sprintf("%s %s", p.RegistryType, ref(p.Identifier, p.Version))}
		switch {
		case p.Transport.Type != "" && p.Transport.Type != "stdio":
			w.Unsupported = fmt.Sprintf("it serves %s on a local port; otter runs packages over stdio", p.Transport.Type)
		case runtimeOf(p) == "":
			w.Unsupported = fmt.Sprintf("otter cannot run %s packages yet", p.RegistryType)
		}
		out = append(out, w)
	}
	for i, r := range s.Remotes {
		w := Way{Remote: true, Index: i, Kind: "remote", Label: fmt.Sprintf("remote (%s) %s", r.Type, r.URL)}
		if r.Type != "streamable-http" && r.Type != "sse" {
			w.Unsupported = fmt.Sprintf("transport %q is neither streamable-http nor sse", r.Type)
		}
		out = append(out, w)
	}
	return out
}

// Kinds are the kinds of way otter can use to run s ("npm", "remote"),
// each once, in the server's order.
func (s Server) Kinds() []string {
	var kinds []string
	for _, w := range s.Ways() {
		if w.Unsupported == "" && !slices.Contains(kinds, w.Kind) {
			kinds = append(kinds, w.Kind)
		}
	}
	return kinds
}

// Pick chooses how to run s: kind "" takes the first way otter can use
// (packages first, as the server lists them), "remote" the first remote,
// a registry type ("npm", "pypi", "oci") the first package of that type.
// It fails with a *NoWayError.
func (s Server) Pick(kind string) (Way, error) {
	ways := s.Ways()
	for _, w := range ways {
		if w.Unsupported == "" && (kind == "" || w.Kind == kind) {
			return w, nil
		}
	}
	return Way{}, &NoWayError{Server: s.Name, Kind: kind, Ways: ways}
}

// NoWayError is a server otter cannot run or reach the way asked.
type NoWayError struct {
	Server string
	Kind   string // what was asked; "" for any way
	Ways   []Way
}

func (e *NoWayError) Error() string {
	var ways []string
	for _, w := range e.Ways {
		s := w.Label
		if w.Unsupported != "" {
			s += " (" + w.Unsupported + ")"
		}
		ways = append(ways, s)
	}
	what := "no package or remote otter can use"
	if e.Kind != "" {
		what = fmt.Sprintf("no %s otter can use", e.Kind)
	}
	if len(ways) == 0 {
		return fmt.Sprintf("the registry's entry of %s has %s: it lists none", e.Server, what)
	}
	return fmt.Sprintf("the registry's entry of %s has %s; it lists %s", e.Server, what, strings.Join(ways, "; "))
}

// ParamKind says what a Param is.
type ParamKind string

const (
	EnvParam      ParamKind = "env"      // an environment variable of the server
	ArgumentParam ParamKind = "argument" // a command-line argument
	HeaderParam   ParamKind = "header"   // an HTTP header of a remote
	VariableParam ParamKind = "variable" // a {name} in a value or URL template
)

// Param is one value a way to run a server needs from the person.
type Param struct {
	Kind ParamKind
	// Name is the variable's or header's name, an argument's (its flag, or
	// its valueHint for a positional one), or a variable's.
	Name string
	// Of says what a variable belongs to ("argument -e", "header
	// Authorization", "the URL"); "" for the others.
	Of                                string
	Description, Default, Placeholder string
	Format                            string // string, number, boolean, filepath
	Choices                           []string
	Required, Secret, Repeated        bool
	// EnvVar is, for a secret, the environment variable the entry reads it
	// from (written as ${EnvVar}); the person sets it, otter never writes
	// the value.
	EnvVar string
}

// ID names p in Values: its kind and name.
func (p Param) ID() string { return string(p.Kind) + ":" + p.Name }

// Values are the values the person gave, by Param.ID; a repeated
// parameter takes several.
type Values map[string][]string

// Params lists what way needs from the person, for a server configured as
// local (which names the variables its secrets are read from).
func (s Server) Params(way Way, local string) ([]Param, error) {
	b := &builder{s: s, local: local}
	if err := b.build(way); err != nil && !errors.As(err, new(*MissingError)) {
		return nil, err
	}
	return b.params, nil
}

// Entry is the [[mcp.servers]] entry called local that runs s the way
// way, with the values v; env looks up the environment (nil: none is
// set), in which an optional secret must be set now to be referenced.
// Required values not given (and without a default) make a *MissingError
// naming every one; a value given for a secret, a *SecretValueError; a
// value for something the server does not take, an *UnknownParamError.
func (s Server) Entry(way Way, local string, v Values, env func(string) (string, bool)) (config.Server, error) {
	b := &builder{s: s, local: local, values: v, lookup: env}
	if err := b.build(way); err != nil {
		return config.Server{}, err
	}
	for id := range v {
		if i := slices.IndexFunc(b.params, func(p Param) bool { return p.ID() == id }); i < 0 {
			return config.Server{}, &UnknownParamError{Server: s.Name, ID: id, Params: b.params}
		}
	}
	return b.srv, nil
}

// MissingError lists the required values not given.
type MissingError struct {
	Server  string
	Missing []Param
}

func (e *MissingError) Error() string {
	var names []string
	for _, p := range e.Missing {
		names = append(names, fmt.Sprintf("%s %s", p.Kind, p.Name))
	}
	return fmt.Sprintf("%s needs values for %s", e.Server, strings.Join(names, ", "))
}

// SecretValueError is a value given for a secret: otter writes a
// reference to an environment variable instead, so that no secret lands
// in a config file.
type SecretValueError struct{ Param Param }

func (e *SecretValueError) Error() string {
	return fmt.Sprintf("%s %s is a secret: otter writes ${%s} in the config and never the value; set %s in the environment instead",
		e.Param.Kind, e.Param.Name, e.Param.EnvVar, e.Param.EnvVar)
}

// UnknownParamError is a value given for something the server does not
// take.
type UnknownParamError struct {
	Server string
	ID     string
	Params []Param
}

func (e *UnknownParamError) Error() string {
	kind, name, _ := strings.Cut(e.ID, ":")
	return fmt.Sprintf("%s takes no %s %s", e.Server, kind, name)
}

// UnsafeError is registry text that otter will not write into a config
// file: it holds "${", which the configuration would expand from the
// person's environment (a server's entry could otherwise read any of the
// person's variables), or a package name that would be taken for an option.
type UnsafeError struct {
	Server string
	What   string
	Text   string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("the registry's entry of %s has %s %q, which otter will not write into a config file; add the server by hand", e.Server, e.What, e.Text)
}

// LocalName is a name for s in the configuration: the last part of its
// registry name without "mcp-server-", "server-" and "-mcp-server"-like
// affixes ("io.github.brave/brave-search-mcp-server" → "brave-search").
func (s Server) LocalName() string {
	n := s.Name[strings.LastIndex(s.Name, "/")+1:]
	short := strings.ToLower(n)
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		short = strings.TrimPrefix(short, p)
	}
	for _, x := range []string{"-mcp-server", "-server-mcp", "-mcp", "-server"} {
		short = strings.TrimSuffix(short, x)
	}
	short = strings.Trim(nameChars().ReplaceAllString(short, "-"), "-._")
	if short == "" {
		return strings.Trim(nameChars().ReplaceAllString(n, "-"), "-._")
	}
	return short
}

// The patterns, compiled on first use: otter's packages cost nothing to
// initialise (most commands never add a server).
var (
	nameChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })
	envChars  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Z0-9]+`) })
	// envAssign is docker's -e KEY=VALUE.
	envAssign = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`) })
	varRef    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`) })
)

// envName makes an environment variable's name of parts: upper case,
// runs of other characters as one "_".
func envName(parts ...string) string {
	return strings.Trim(envChars().ReplaceAllString(strings.ToUpper(strings.Join(parts, "_")), "_"), "_")
}

// ref is a package's identifier at its version.
func ref(id, version string) string {
	if version == "" {
		return id
	}
	return id + "@" + version
}

// runtimeOf is the program that runs p: its runtime hint, else the usual
// one of its registry; "" for one otter cannot run.
func runtimeOf(p Package) string {
	def := map[string]string{"npm": "npx", "pypi": "uvx", "oci": "docker"}[p.RegistryType]
	if def == "" {
		return ""
	}
	if p.RuntimeHint != "" {
		return p.RuntimeHint
	}
	return def
}

// builder builds the entry of one way, collecting the Params it needs.
type builder struct {
	s       Server
	local   string
	values  Values                      // nil: only listing the params
	lookup  func(string) (string, bool) // the environment, for optional secrets
	params  []Param
	missing []Param
	srv     config.Server
	// dockerEnv: values of docker's -e KEY=VALUE, passed by name (-e KEY)
	// through the entry's env, so that none stands on a command line.
	dockerEnv bool
}

func (b *builder) build(way Way) error {
	b.srv = config.Server{Name: b.local}
	var err error
	if way.Remote {
		if way.Index >= len(b.s.Remotes) {
			return &NoWayError{Server: b.s.Name, Kind: "remote", Ways: b.s.Ways()}
		}
		err = b.remote(b.s.Remotes[way.Index])
	} else {
		if way.Index >= len(b.s.Packages) {
			return &NoWayError{Server: b.s.Name, Kind: way.Kind, Ways: b.s.Ways()}
		}
		err = b.pkg(b.s.Packages[way.Index])
	}
	if err != nil {
		return err
	}
	if len(b.missing) > 0 {
		return &MissingError{Server: b.s.Name, Missing: b.missing}
	}
	if b.srv.URL != "" {
		if u, err := url.Parse(b.srv.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(b.srv.URL, "{}") {
			return &UnsafeError{Server: b.s.Name, What: "the remote URL", Text: b.srv.URL}
		}
	}
	return nil
}

// add records p (once) and returns the values given for it; a value for a
// secret is an error.
func (b *builder) add(p Param) ([]string, error) {
	if !slices.ContainsFunc(b.params, func(q Param) bool { return q.ID() == p.ID() }) {
		b.params = append(b.params, p)
	}
	given := b.values[p.ID()]
	if p.Secret && len(given) > 0 {
		return nil, &SecretValueError{Param: p}
	}
	return given, nil
}

// safe checks registry text before it goes into the entry.
func (b *builder) safe(what, text string) error {
	if strings.Contains(text, "${") {
		return &UnsafeError{Server: b.s.Name, What: what, Text: text}
	}
	return nil
}

// param makes in a Param of kind and name.
func param(kind ParamKind, name, of string, in Input, repeated bool) Param {
	return Param{Kind: kind, Name: name, Of: of, Description: in.Description, Default: in.Default, Placeholder: in.Placeholder,
		Format: in.Format, Choices: in.Choices, Required: in.IsRequired, Secret: in.IsSecret, Repeated: repeated}
}

// resolve returns the values of an input that is itself a Param (self):
// its fixed value with its variables filled in, else the values given,
// else its default when it is required; none when it is optional and not
// given (nor a fixed value whose optional variables were not). A secret
// without a fixed value is its ${EnvVar}: always when it is required, and
// when the variable is set now when it is optional (else it is left out,
// as an optional value not given).
func (b *builder) resolve(self Param, in Input) ([]string, error) {
	for _, t := range []struct{ what, text string }{{"the value", in.Value}, {"the default", in.Default}} {
		if err := b.safe(t.what+" of "+string(self.Kind)+" "+self.Name, t.text); err != nil {
			return nil, err
		}
	}
	if in.Value != "" {
		v, empty, err := b.fill(in.Value, in.Variables, string(self.Kind)+" "+self.Name, self)
		if err != nil || (empty && !in.IsRequired) {
			return nil, err
		}
		return []string{v}, nil
	}
	given, err := b.add(self)
	if err != nil {
		return nil, err
	}
	switch {
	case self.Secret && (in.IsRequired || b.isSet(self.EnvVar)):
		return []string{"${" + self.EnvVar + "}"}, nil
	case self.Secret:
	case len(given) > 0:
		return given, nil
	case in.Default != "" && in.IsRequired:
		return []string{in.Default}, nil
	case in.IsRequired:
		b.missing = append(b.missing, self)
	}
	return nil, nil
}

// isSet reports whether the environment variable name is set now.
func (b *builder) isSet(name string) bool {
	if b.lookup == nil {
		return false
	}
	_, ok := b.lookup(name)
	return ok
}

// fill replaces the {variables} of template; of says what it belongs to
// (for the Params), and self is the param the template is the value of
// (an environment variable's secret is read from that variable). empty
// reports an optional variable left without a value.
func (b *builder) fill(template string, vars map[string]Input, of string, self Param) (out string, empty bool, err error) {
	out = varRef().ReplaceAllStringFunc(template, func(m string) string {
		name := m[1 : len(m)-1]
		in, ok := vars[name]
		if !ok || err != nil {
			return m // not a variable of this value: left as it is
		}
		p := param(VariableParam, name, of, in, false)
		if p.Secret {
			p.EnvVar = envName(b.local, name)
			if self.Kind == EnvParam {
				p.EnvVar = self.Name // KEY={token}: read from KEY itself
			}
		}
		var vs []string
		if vs, err = b.resolve(p, in); err == nil && len(vs) > 0 {
			return vs[0]
		}
		empty = true
		return ""
	})
	return out, empty, err
}

// args resolves arguments into a command line's words.
func (b *builder) args(list []Argument) ([]string, error) {
	var out []string
	for _, a := range list {
		name := a.ValueHint
		if a.Type == "named" {
			name = a.Name
		}
		if name == "" {
			name = a.Value
		}
		if err := b.safe("the argument", a.Name); err != nil {
			return nil, err
		}
		p := param(ArgumentParam, name, "", a.Input, a.IsRepeated)
		if p.Secret {
			p.EnvVar = envName(b.local, name)
		}
		// docker -e KEY=VALUE: KEY passed by name, its value in env.
		if flag := strings.TrimLeft(a.Name, "-"); b.dockerEnv && (flag == "e" || flag == "env") {
			if m := envAssign().FindStringSubmatch(a.Value); m != nil {
				kv := KeyValueInput{Name: m[1], Input: a.Input}
				kv.Value = m[2]
				if err := b.env(kv); err != nil {
					return nil, err
				}
				if _, ok := b.srv.Env[m[1]]; ok {
					out = append(out, "-e", m[1])
				}
				continue
			}
		}
		vs, err := b.resolve(p, a.Input)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			switch {
			case a.Type != "named":
				out = append(out, v)
			case a.Format == "boolean":
				if v == "true" {
					out = append(out, a.Name)
				}
			default:
				out = append(out, a.Name, v)
			}
		}
	}
	return out, nil
}

// env resolves one environment variable into the entry's env.
func (b *builder) env(kv KeyValueInput) error {
	if err := b.safe("the environment variable", kv.Name); err != nil {
		return err
	}
	p := param(EnvParam, kv.Name, "", kv.Input, false)
	if p.Secret {
		p.EnvVar = kv.Name
	}
	vs, err := b.resolve(p, kv.Input)
	if err != nil || len(vs) == 0 || vs[0] == "" {
		return err
	}
	if b.srv.Env == nil {
		b.srv.Env = map[string]string{}
	}
	b.srv.Env[kv.Name] = vs[0]
	return nil
}

// pkg builds the command line of a package.
func (b *builder) pkg(p Package) error {
	runtime := runtimeOf(p)
	for _, t := range []struct{ what, text string }{{"the package", p.Identifier}, {"the version", p.Version}, {"the runtime", p.RuntimeHint}} {
		if err := b.safe(t.what, t.text); err != nil {
			return err
		}
		if strings.HasPrefix(t.text, "-") || strings.ContainsAny(t.text, " \t\n") {
			return &UnsafeError{Server: b.s.Name, What: t.what, Text: t.text}
		}
	}
	if runtime == "" {
		return &NoWayError{Server: b.s.Name, Kind: p.RegistryType, Ways: b.s.Ways()}
	}
	b.dockerEnv = p.RegistryType == "oci"
	rt, err := b.args(p.RuntimeArguments)
	if err != nil {
		return err
	}
	var envFlags []string
	for _, kv := range p.EnvironmentVariables {
		if err := b.env(kv); err != nil {
			return err
		}
		if _, ok := b.srv.Env[kv.Name]; ok && b.dockerEnv {
			envFlags = append(envFlags, "-e", kv.Name) // into the container
		}
	}
	b.dockerEnv = false
	pk, err := b.args(p.PackageArguments)
	if err != nil {
		return err
	}
	var args []string
	switch p.RegistryType {
	case "npm":
		args = rt
		// npx installs without asking (-y, or its long form, given already)
		yes := slices.ContainsFunc(rt, func(a string) bool { return a == "-y" || strings.TrimLeft(a, "-") == "yes" })
		if runtime == "npx" && !yes {
			args = append(args, "-y")
		}
		args = append(append(args, ref(p.Identifier, p.Version)), pk...)
	case "pypi":
		args = append(append(rt, ref(p.Identifier, p.Version)), pk...)
	case "oci":
		image := p.Identifier
		if last := image[strings.LastIndex(image, "/")+1:]; p.Version != "" && !strings.ContainsAny(last, ":@") {
			image += ":" + p.Version
		}
		if len(rt) > 0 && rt[0] == "run" { // the runtime arguments are docker's whole command line
			args = append(args, rt[0])
			args = append(args, envFlags...)
			args = append(args, rt[1:]...)
			if !slices.Contains(rt, image) && !slices.Contains(rt, p.Identifier) {
				args = append(args, image)
			}
		} else {
			args = append(append(append([]string{"run", "-i", "--rm"}, envFlags...), rt...), image)
		}
		args = append(args, pk...)
	}
	b.srv.Transport, b.srv.Command, b.srv.Args = config.TransportStdio, runtime, args
	return nil
}

// remote builds the entry of a remote.
func (b *builder) remote(t Transport) error {
	if err := b.safe("the URL", t.URL); err != nil {
		return err
	}
	u, _, err := b.fill(t.URL, t.Variables, "the URL", Param{})
	if err != nil {
		return err
	}
	b.srv.URL = u
	b.srv.Transport = config.TransportHTTP
	if t.Type == "sse" {
		b.srv.Transport = config.TransportSSE
	}
	for _, h := range t.Headers {
		if err := b.safe("the header", h.Name); err != nil {
			return err
		}
		p := param(HeaderParam, h.Name, "", h.Input, false)
		if p.Secret {
			p.EnvVar = envName(b.local, h.Name)
		}
		vs, err := b.resolve(p, h.Input)
		if err != nil {
			return err
		}
		if len(vs) > 0 && vs[0] != "" {
			if b.srv.Headers == nil {
				b.srv.Headers = map[string]string{}
			}
			b.srv.Headers[h.Name] = vs[0]
		}
	}
	return nil
}
