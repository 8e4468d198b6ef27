package cli

// `otter mcp search` and `otter mcp add NAME --from-registry`: servers
// from an MCP Registry (internal/registry), the official one or the one
// [mcp] registry names. The registry words nothing of this command line:
// its typed errors become hints here.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/registry"
	"github.com/otter-sh/otter/internal/termtext"
)

// MCPSearchOptions are the options of `otter mcp search`.
type MCPSearchOptions struct {
	Query string
	Limit int // 0: 30
	JSON  bool
}

// registryClient is the client of the registry the configuration names,
// caching in otter's cache directory.
func registryClient(f *Factory) (*registry.Client, error) {
	lo := f.LoadOptions()
	cfg, err := config.Load(lo)
	if err != nil {
		return nil, err
	}
	return registry.New(registry.Options{URL: cfg.MCP.Registry, CacheDir: lo.Paths.CacheDir, UserAgent: "otter/" + cmpOr(f.Version, "dev")})
}

// RunMCPSearch lists the registry's servers whose names hold the query.
func RunMCPSearch(ctx context.Context, f *Factory, o MCPSearchOptions) error {
	c, err := registryClient(f)
	if err != nil {
		return ExitCode(2, err)
	}
	res, err := c.Search(ctx, o.Query, o.Limit)
	if err != nil {
		return ExitCode(2, registryError(err))
	}
	if res.Cached != nil {
		fmt.Fprintf(f.IO.ErrOut, "otter: %s\n", cachedNote(c.URL(), res.Cached))
	}
	if o.JSON {
		out := make([]RegistryServerJSON, 0, len(res.Servers))
		for _, e := range res.Servers {
			out = append(out, registryServerJSON(e.Server))
		}
		return writeJSON(f.IO.Out, out)
	}
	if len(res.Servers) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "otter: the MCP Registry at %s has no server whose name holds %q\n", c.URL(), o.Query)
		return nil
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tRUNS AS\tDESCRIPTION")
	for _, e := range res.Servers {
		s := e.Server
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Line(s.Name), cmpOr(termtext.Line(s.Version), "-"), runsAs(s), cut(termtext.Line(s.Description), 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.More {
		fmt.Fprintf(f.IO.ErrOut, "otter: more servers match; narrow the search, or show more with --limit\n")
	}
	fmt.Fprintf(f.IO.ErrOut, "otter: add one with `otter mcp add NAME --from-registry` (NAME as listed)\n")
	return nil
}

// RegistryServerJSON is one element of `otter mcp search --json`.
type RegistryServerJSON struct {
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description"`
	Version     string            `json:"version"`
	Website     string            `json:"website,omitempty"`
	Repository  string            `json:"repository,omitempty"`
	LocalName   string            `json:"local_name"` // the name `add --from-registry` gives it
	Ways        []RegistryWayJSON `json:"ways"`
}

// RegistryWayJSON is a way to run or reach a registry server.
type RegistryWayJSON struct {
	Kind        string `json:"kind"` // npm, pypi, oci, remote, …
	Label       string `json:"label"`
	Unsupported string `json:"unsupported,omitempty"`
}

func registryServerJSON(s registry.Server) RegistryServerJSON {
	j := RegistryServerJSON{Name: s.Name, Title: s.Title, Description: s.Description, Version: s.Version, Website: s.WebsiteURL,
		LocalName: s.LocalName(), Ways: []RegistryWayJSON{}}
	if s.Repository != nil {
		j.Repository = s.Repository.URL
	}
	for _, w := range s.Ways() {
		j.Ways = append(j.Ways, RegistryWayJSON{Kind: w.Kind, Label: w.Label, Unsupported: w.Unsupported})
	}
	return j
}

// runsAs lists the kinds of way otter can use to run s ("npm, remote").
func runsAs(s registry.Server) string {
	if kinds := s.Kinds(); len(kinds) > 0 {
		return strings.Join(kinds, ", ")
	}
	return "(none otter runs)"
}

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// cachedNote says that an answer is the cache's, from when, and why.
func cachedNote(url string, c *registry.Cached) string {
	return fmt.Sprintf("the MCP Registry at %s cannot be reached (%v); showing what it answered on %s (cached)",
		url, c.Err, c.FetchedAt.Local().Format(time.DateTime))
}

// registryError adds to a registry's error what to do.
func registryError(err error) error {
	var ue *registry.UnreachableError
	var se *registry.StatusError
	switch {
	case errors.As(err, &ue):
		return fmt.Errorf("%w; check the network, or the registry's URL ([mcp] registry in your config; `otter config show` says where it is set)", err)
	case errors.As(err, &se):
		return fmt.Errorf("%w; if this registry needs credentials or another URL, see [mcp] registry in your config", err)
	}
	return err
}

// fromRegistry looks up o.Name in the registry: a full registry name
// ("io.github.owner/server"), or the short name a search lists it under
// ("brave-search") when exactly one server has it.
func fromRegistry(ctx context.Context, c *registry.Client, name string, errOut io.Writer) (*registry.Server, error) {
	if strings.Contains(name, "/") {
		e, cached, err := c.Get(ctx, name)
		if err != nil {
			if errors.As(err, new(*registry.NotFoundError)) {
				return nil, fmt.Errorf("%w; `otter mcp search %s` lists the servers whose names hold it", err, name[strings.LastIndex(name, "/")+1:])
			}
			return nil, registryError(err)
		}
		if cached != nil {
			fmt.Fprintf(errOut, "otter: %s\n", cachedNote(c.URL(), cached))
		}
		return &e.Server, nil
	}
	res, err := c.Search(ctx, name, 100)
	if err != nil {
		return nil, registryError(err)
	}
	if res.Cached != nil {
		fmt.Fprintf(errOut, "otter: %s\n", cachedNote(c.URL(), res.Cached))
	}
	var found []registry.Server
	for _, e := range res.Servers {
		last := e.Server.Name[strings.LastIndex(e.Server.Name, "/")+1:]
		if e.Server.LocalName() == name || last == name {
			found = append(found, e.Server)
		}
	}
	switch len(found) {
	case 1:
		return &found[0], nil
	case 0:
		return nil, fmt.Errorf("the MCP Registry at %s has no server called %q; give its full name as `otter mcp search %s` lists it", c.URL(), name, name)
	}
	var names []string
	for _, s := range found {
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("%d servers of the MCP Registry are called %q: %s; give the full name of one", len(found), name, strings.Join(names, ", "))
}

// runMCPAddFromRegistry is `otter mcp add NAME --from-registry`.
func runMCPAddFromRegistry(ctx context.Context, f *Factory, o MCPAddOptions) error {
	switch {
	case len(o.Target) > 0:
		return ExitCode(2, fmt.Errorf("with --from-registry, give the server's name in the registry and no command or URL (not %q): otter takes how to run it from the registry", strings.Join(o.Target, " ")))
	case o.Transport != "":
		return ExitCode(2, errors.New("with --from-registry the registry says how the server runs: choose a remote with --remote, or a package with --package npm|pypi|oci, instead of --transport"))
	case o.Remote && o.Package != "":
		return ExitCode(2, errors.New("--remote and --package contradict each other: give one"))
	}
	c, err := registryClient(f)
	if err != nil {
		return ExitCode(2, err)
	}
	s, err := fromRegistry(ctx, c, o.Name, f.IO.ErrOut)
	if err != nil {
		return ExitCode(2, err)
	}
	kind := o.Package
	if o.Remote {
		kind = "remote"
	}
	way, err := s.Pick(kind)
	if err != nil {
		return ExitCode(2, err)
	}
	local := cmpOr(o.As, s.LocalName())
	params, err := s.Params(way, local)
	if err != nil {
		return ExitCode(2, err)
	}
	values, err := o.registryValues(params)
	if err != nil {
		return ExitCode(2, err)
	}
	lookup := f.LoadOptions().LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	srv, err := s.Entry(way, local, values, lookup)
	if err != nil {
		return ExitCode(2, registryEntryError(err, s.Name, local))
	}
	if srv.Roots, err = o.roots(); err != nil {
		return ExitCode(2, err)
	}
	comment := fmt.Sprintf("From the MCP Registry: %s %s (%s)", s.Name, s.Version, way.Label)
	file, scope, err := addServerEntry(f, o.Scope, srv, comment)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "Added MCP server %q to %s (%s scope): %s %s, %s.\n", srv.Name, file, scope, termtext.Line(s.Name), termtext.Line(s.Version), termtext.Line(way.Label))
	for _, p := range params {
		if !p.Secret {
			continue
		}
		state := "set now"
		if _, ok := lookup(p.EnvVar); !ok {
			state = "not set now"
			if !p.Required {
				state += ", so the entry leaves it out; set it and add the server again to use it"
			}
		}
		fmt.Fprintf(f.IO.ErrOut, "otter: it reads %s %s from $%s (%s): otter wrote ${%s}, never the value\n",
			p.Kind, termtext.Line(p.Name), p.EnvVar, state, p.EnvVar)
	}
	if srv.Command != "" {
		fmt.Fprintf(f.IO.ErrOut, "otter: it runs in otter's sandbox: it writes only in the project, the temporary directory and its package runner's caches; loosen it with sandbox = { … } in its entry\n")
	}
	fmt.Fprintln(f.IO.ErrOut, "otter: a running TUI picks it up with auto_reload, or with /mcp reload")
	return nil
}

// registryValues maps --env, --header and --arg onto params.
func (o MCPAddOptions) registryValues(params []registry.Param) (registry.Values, error) {
	v := registry.Values{}
	has := func(id string) bool {
		for _, p := range params {
			if p.ID() == id {
				return true
			}
		}
		return false
	}
	for _, kv := range o.Env {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: write it as KEY=VALUE", kv)
		}
		v["env:"+k] = append(v["env:"+k], val)
	}
	headers, err := parseHeaders(o.Headers)
	if err != nil {
		return nil, err
	}
	for k, val := range headers {
		v["header:"+k] = append(v["header:"+k], val)
	}
	for _, kv := range o.Args {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: write it as NAME=VALUE", kv)
		}
		id := "argument:" + k
		switch {
		case has(id):
		case has("argument:--" + k): // --arg port=8080 for a named --port
			id = "argument:--" + k
		default:
			id = "variable:" + k
		}
		v[id] = append(v[id], val)
	}
	return v, nil
}

// registryEntryError words an Entry error with the flags that answer it.
func registryEntryError(err error, server, local string) error {
	var missing *registry.MissingError
	var unknown *registry.UnknownParamError
	var secret *registry.SecretValueError
	switch {
	case errors.As(err, &missing):
		var b strings.Builder
		fmt.Fprintf(&b, "%s needs values otter cannot choose for you; give them with:", server)
		for _, p := range missing.Missing {
			fmt.Fprintf(&b, "\n  %s", flagFor(p))
			if d := termtext.Line(cmp.Or(p.Description, p.Placeholder)); d != "" {
				fmt.Fprintf(&b, "  (%s)", d)
			}
			if len(p.Choices) > 0 {
				fmt.Fprintf(&b, " one of: %s", termtext.Line(strings.Join(p.Choices, ", ")))
			}
			if p.Repeated {
				b.WriteString(" — repeat it for more")
			}
		}
		return errors.New(b.String())
	case errors.As(err, &unknown):
		var takes []string
		for _, p := range unknown.Params {
			if !p.Secret {
				takes = append(takes, flagFor(p))
			}
		}
		what := "nothing"
		if len(takes) > 0 {
			what = strings.Join(takes, ", ")
		}
		return fmt.Errorf("%w; it takes %s", err, what)
	case errors.As(err, &secret):
		return fmt.Errorf("%w (leave it out of the command line: it would stay in your shell's history)", err)
	}
	return err
}

// flagFor is the flag that gives p a value.
func flagFor(p registry.Param) string {
	placeholder := "VALUE"
	if p.Format != "" && p.Format != "string" {
		placeholder = strings.ToUpper(p.Format)
	}
	switch p.Kind {
	case registry.EnvParam:
		return fmt.Sprintf("--env %s=%s", p.Name, placeholder)
	case registry.HeaderParam:
		return fmt.Sprintf("--header '%s: %s'", p.Name, placeholder)
	}
	return fmt.Sprintf("--arg %s=%s", strings.TrimLeft(p.Name, "-"), placeholder)
}
