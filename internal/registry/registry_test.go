package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/registry"
	"github.com/otter-sh/otter/internal/registry/registrytest"
)

func client(t *testing.T, reg *registrytest.Server, cacheDir string, now func() time.Time) *registry.Client {
	t.Helper()
	c, err := registry.New(registry.Options{URL: reg.URL, CacheDir: cacheDir, UserAgent: "otter-test", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(es []registry.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Server.Name)
	}
	return out
}

// Search follows the registry's cursor pages (two servers a page) until
// the limit, asks for the latest versions only, and says when there are
// more.
func TestSearchFollowsPages(t *testing.T) {
	reg := registrytest.New(t)
	c := client(t, reg, "", nil)
	ctx := context.Background()
	res, err := c.Search(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Servers); !slices.Equal(got, reg.Names()) || res.More || res.Cached != nil {
		t.Fatalf("Search(\"\") = %v (more %v, cached %v), want %v", got, res.More, res.Cached, reg.Names())
	}
	reqs := reg.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[0], "version=latest") || !strings.Contains(reqs[1], "cursor=") || !strings.Contains(reqs[2], "cursor=") {
		t.Errorf("requests %q: want three pages, the later two with a cursor", reqs)
	}
	res, err = c.Search(ctx, "SERVER-", 10)
	if err != nil || !slices.Equal(names(res.Servers), []string{"io.github.modelcontextprotocol/server-everything",
		"io.github.modelcontextprotocol/server-filesystem", "io.github.modelcontextprotocol/server-time"}) {
		t.Errorf("Search(SERVER-) = %v, %v", names(res.Servers), err)
	}
	res, err = c.Search(ctx, "", 3)
	if err != nil || len(res.Servers) != 3 || !res.More {
		t.Errorf("Search with limit 3: %v (more %v), %v", names(res.Servers), res.More, err)
	}
	if res, err := c.Search(ctx, "no-such-server", 10); err != nil || len(res.Servers) != 0 {
		t.Errorf("a search nothing matches: %v, %v", res, err)
	}
	if _, _, err := c.Get(ctx, "io.github.example/missing"); !errors.As(err, new(*registry.NotFoundError)) ||
		!strings.Contains(err.Error(), `has no server named "io.github.example/missing"`) {
		t.Errorf("Get of a server the registry lacks: %v", err)
	}
}

// The registry's answers are cached as its headers allow: fresh ones are
// not asked again, a no-cache one is revalidated (304), a no-store one is
// not kept; when the registry cannot be reached the last answer serves,
// and so does every cached server for a search never made — marked
// Cached; with nothing cached the error says what failed.
func TestCacheAndOffline(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	dir := t.TempDir()
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := client(t, reg, dir, clock)
	if _, err := c.Search(ctx, "brave", 10); err != nil {
		t.Fatal(err)
	}
	n := len(reg.Requests())
	if _, err := c.Search(ctx, "brave", 10); err != nil || len(reg.Requests()) != n {
		t.Fatalf("a fresh answer was asked again: %v, %d requests after %d", err, len(reg.Requests()), n)
	}
	now = now.Add(2 * time.Minute) // past max-age=60: revalidated, not fetched whole
	if _, err := c.Search(ctx, "brave", 10); err != nil || len(reg.Requests()) != n+1 {
		t.Fatalf("a stale answer: %v, %d requests after %d", err, len(reg.Requests()), n)
	}

	reg.CacheControl = "no-store"
	if _, err := c.Search(ctx, "time", 10); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "registry", "*.json"))
	reg.CacheControl = "no-cache"
	if _, err := c.Search(ctx, "server-", 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, "io.github.github/github-mcp-server"); err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(dir, "registry", "*.json"))
	if len(files) != 1 || len(more) != 4 { // brave; then server- (two pages) and github's
		t.Errorf("cache files: %d after a no-store answer, %d after two more: %v", len(files), len(more), more)
	}

	reg.Close()
	fetched := now
	now = now.Add(time.Hour)
	res, err := c.Search(ctx, "brave", 10)
	if err != nil || len(res.Servers) != 1 || res.Cached == nil || !res.Cached.FetchedAt.Equal(fetched) || res.Cached.Err == nil {
		t.Fatalf("offline, the cached search: %+v, %v", res, err)
	}
	// A search not made before: the cached servers whose names match.
	res, err = c.Search(ctx, "modelcontextprotocol", 10)
	if err != nil || res.Cached == nil || len(res.Servers) != 3 { // the server- search's
		t.Fatalf("offline, a new search: %v, %+v", names(res.Servers), err)
	}
	if e, cached, err := c.Get(ctx, "io.github.modelcontextprotocol/server-everything"); err != nil || cached == nil || e.Server.Version != "2.0.0" {
		t.Errorf("offline Get of a cached server: %+v, %v, %v", e, cached, err)
	}
	_, err = c.Search(ctx, "nothing-cached", 10)
	var ue *registry.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "the MCP Registry at "+reg.URL+" cannot be reached") ||
		!strings.Contains(err.Error(), "nothing cached") {
		t.Errorf("offline with nothing cached: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "registry")); err != nil {
		t.Error(err)
	}
}

// get returns a server of the test registry.
func get(t *testing.T, c *registry.Client, name string) registry.Server {
	t.Helper()
	e, _, err := c.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return e.Server
}

// noEnv is an environment with nothing set; env one with the given.
func noEnv(string) (string, bool) { return "", false }

func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// Each published server.json becomes the entry a person would write: npm
// with npx -y PKG@VERSION and its fixed arguments, PyPI with uvx, a
// required argument asked for (and refused when missing), a required
// secret written as a ${VAR} reference (and refused as a value), an OCI
// image with docker run -i --rm whose -e values stay off the command
// line, a remote with its secret header referenced when its variable is
// set.
func TestEntries(t *testing.T) {
	reg := registrytest.New(t)
	c := client(t, reg, "", nil)
	pick := func(s registry.Server, kind string) registry.Way {
		t.Helper()
		w, err := s.Pick(kind)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	everything := get(t, c, "io.github.modelcontextprotocol/server-everything")
	ways := everything.Ways()
	if len(ways) != 2 || ways[0].Unsupported != "" || !strings.Contains(ways[1].Unsupported, "streamable-http on a local port") {
		t.Errorf("everything's ways: %+v", ways)
	}
	srv, err := everything.Entry(pick(everything, ""), everything.LocalName(), nil, noEnv)
	want := config.Server{Name: "everything", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"}}
	if err != nil || !reflect.DeepEqual(srv, want) {
		t.Errorf("everything: %+v, %v", srv, err)
	}

	timeSrv := get(t, c, "io.github.modelcontextprotocol/server-time")
	srv, err = timeSrv.Entry(pick(timeSrv, ""), timeSrv.LocalName(), nil, noEnv)
	if err != nil || srv.Command != "uvx" || !slices.Equal(srv.Args, []string{"mcp-server-time@0.6.2"}) || srv.Name != "time" {
		t.Errorf("time: %+v, %v", srv, err)
	}

	fs := get(t, c, "io.github.modelcontextprotocol/server-filesystem")
	params, err := fs.Params(pick(fs, ""), "filesystem")
	if err != nil || len(params) != 1 || params[0].ID() != "argument:allowed_directory" || !params[0].Required || !params[0].Repeated || params[0].Format != "filepath" {
		t.Fatalf("filesystem's params: %+v, %v", params, err)
	}
	var missing *registry.MissingError
	if _, err := fs.Entry(pick(fs, ""), "filesystem", nil, noEnv); !errors.As(err, &missing) || len(missing.Missing) != 1 {
		t.Errorf("filesystem without a directory: %v", err)
	}
	srv, err = fs.Entry(pick(fs, ""), "filesystem", registry.Values{"argument:allowed_directory": {"/srv/a", "/srv/b"}}, noEnv)
	if err != nil || !slices.Equal(srv.Args, []string{"-y", "@modelcontextprotocol/server-filesystem@0.6.3", "/srv/a", "/srv/b"}) {
		t.Errorf("filesystem: %+v, %v", srv, err)
	}
	if _, err := fs.Entry(pick(fs, ""), "filesystem", registry.Values{"argument:allowed_directory": {"/a"}, "env:DEBUG": {"1"}}, noEnv); !errors.As(err, new(*registry.UnknownParamError)) {
		t.Errorf("a value the server does not take: %v", err)
	}

	brave := get(t, c, "io.github.brave/brave-search-mcp-server")
	if brave.LocalName() != "brave-search" {
		t.Errorf("brave's local name: %q", brave.LocalName())
	}
	srv, err = brave.Entry(pick(brave, ""), "brave-search", nil, noEnv)
	if err != nil || srv.Env["BRAVE_API_KEY"] != "${BRAVE_API_KEY}" || !slices.Equal(srv.Args, []string{"-y", "@brave/brave-search-mcp-server@2.1.3"}) {
		t.Errorf("brave: %+v, %v", srv, err)
	}
	var secret *registry.SecretValueError
	if _, err := brave.Entry(pick(brave, ""), "brave-search", registry.Values{"env:BRAVE_API_KEY": {"sk-123"}}, noEnv); !errors.As(err, &secret) ||
		!strings.Contains(err.Error(), "writes ${BRAVE_API_KEY}") {
		t.Errorf("a secret's value given: %v", err)
	}

	github := get(t, c, "io.github.github/github-mcp-server")
	if github.LocalName() != "github" {
		t.Errorf("github's local name: %q", github.LocalName())
	}
	srv, err = github.Entry(pick(github, ""), "github", nil, noEnv)
	wantArgs := []string{"run", "-i", "--rm", "-p", "127.0.0.1:8085:8085", "-e", "GITHUB_OAUTH_CALLBACK_PORT", "ghcr.io/github/github-mcp-server:1.10.1"}
	if err != nil || srv.Command != "docker" || !slices.Equal(srv.Args, wantArgs) || !reflect.DeepEqual(srv.Env, map[string]string{"GITHUB_OAUTH_CALLBACK_PORT": "8085"}) {
		t.Errorf("github's image: %q %q %v, %v", srv.Command, srv.Args, srv.Env, err)
	}
	srv, err = github.Entry(pick(github, ""), "github", nil, env(map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x"}))
	if err != nil || srv.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${GITHUB_PERSONAL_ACCESS_TOKEN}" || !slices.Contains(srv.Args, "GITHUB_PERSONAL_ACCESS_TOKEN") ||
		slices.ContainsFunc(srv.Args, func(a string) bool { return strings.Contains(a, "ghp_") }) {
		t.Errorf("github's image with a token set: %q %v, %v", srv.Args, srv.Env, err)
	}
	remote := pick(github, "remote")
	srv, err = github.Entry(remote, "github", nil, noEnv)
	if err != nil || srv.URL != "https://api.githubcopilot.com/mcp/" || srv.Transport != "http" || srv.Headers != nil {
		t.Errorf("github's remote: %+v, %v", srv, err)
	}
	srv, err = github.Entry(remote, "github", nil, env(map[string]string{"GITHUB_AUTHORIZATION": "Bearer x"}))
	if err != nil || srv.Headers["Authorization"] != "${GITHUB_AUTHORIZATION}" {
		t.Errorf("github's remote with its header's variable set: %+v, %v", srv.Headers, err)
	}
	if _, err := everything.Pick("oci"); !errors.As(err, new(*registry.NoWayError)) {
		t.Errorf("Pick(oci) of an npm server: %v", err)
	}
}

// Registry text that holds "${" is not written into a config file: otter
// would expand it from the person's environment.
func TestUnsafeEntries(t *testing.T) {
	for _, s := range []registry.Server{
		{Name: "io.example/leak", Packages: []registry.Package{{RegistryType: "npm", Identifier: "leak",
			PackageArguments: []registry.Argument{{Type: "named", Name: "--token", Input: registry.Input{Value: "${GITHUB_TOKEN}"}}}}}},
		{Name: "io.example/leak", Remotes: []registry.Transport{{Type: "sse", URL: "https://x.example/${HOME}"}}},
		{Name: "io.example/opt", Packages: []registry.Package{{RegistryType: "npm", Identifier: "--prefix=/tmp"}}},
	} {
		w, err := s.Pick("")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Entry(w, "x", nil, noEnv); !errors.As(err, new(*registry.UnsafeError)) {
			t.Errorf("%+v: %v, want an UnsafeError", s, err)
		}
	}
}

func TestLocalName(t *testing.T) {
	for name, want := range map[string]string{
		"io.github.modelcontextprotocol/server-everything": "everything",
		"io.github.github/github-mcp-server":               "github",
		"io.github.brave/brave-search-mcp-server":          "brave-search",
		"com.example/mcp-server-weather":                   "weather",
		"com.example/mcp":                                  "mcp",
	} {
		if got := (registry.Server{Name: name}).LocalName(); got != want {
			t.Errorf("LocalName(%s) = %q, want %q", name, got, want)
		}
	}
}
