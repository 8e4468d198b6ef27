// Package registry is otter's client of an MCP Registry — the official one
// at registry.modelcontextprotocol.io, or another that speaks its REST API
// v0.1 (a company's): Search lists servers (GET /v0.1/servers?search=…,
// following the cursor pagination), Get fetches one server's latest
// server.json, and a Server's Entry turns it into a [[mcp.servers]] entry
// (entry.go): npm packages run with npx, PyPI ones with uvx, OCI images
// with docker run, remotes over streamable HTTP or SSE; the values it needs
// are Inputs, and secrets are written as ${VAR} references, never inline.
//
// Answers are kept in otter's cache directory as the registry's cache
// headers allow (Cache-Control, Expires, ETag, Last-Modified; cache.go),
// so that a search works offline with what was last seen, and says so
// (Result.Cached). The registry is reached through safehttp's client: a
// registry the configuration names is trusted to be where it says, and
// every other host (a redirect) must be a public address.
//
// It imports only config and safehttp of otter's packages.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/safehttp"
)

// maxBody bounds one answer of the registry; a page of 100 servers is
// some 200 KB.
const maxBody = 8 << 20

// pageSize is how many servers Search asks for per page.
const pageSize = 50

// Server is a server.json document: what a registry says of one version
// of an MCP server, and how to run or reach it.
type Server struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where a server's source code is.
type Repository struct {
	URL       string `json:"url"`
	Source    string `json:"source"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to run a server locally.
type Package struct {
	RegistryType         string          `json:"registryType"` // npm, pypi, oci, nuget, mcpb
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSHA256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            Transport       `json:"transport"`
	RuntimeArguments     []Argument      `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument      `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is how a package or a remote is reached: stdio,
// streamable-http or sse, with a URL template and headers.
type Transport struct {
	Type    string          `json:"type"`
	URL     string          `json:"url,omitempty"`
	Headers []KeyValueInput `json:"headers,omitempty"`
	// Variables fill in the URL's {curly_braces} (remotes).
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value a server needs: fixed (Value), or given by the person.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	Format      string   `json:"format,omitempty"` // string, number, boolean, filepath
	Value       string   `json:"value,omitempty"`
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
	// Variables fill in Value's {curly_braces}.
	Variables map[string]Input `json:"variables,omitempty"`
}

// Argument is a command-line argument: positional, or named (--flag value).
type Argument struct {
	Input
	Type       string `json:"type"` // positional, named
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// KeyValueInput is an environment variable or an HTTP header.
type KeyValueInput struct {
	Input
	Name string `json:"name"`
}

// Entry is one server as a registry lists it: its server.json and the
// registry's own metadata.
type Entry struct {
	Server Server `json:"server"`
	Meta   struct {
		Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
	} `json:"_meta"`
}

// Official is the official registry's metadata of a server version.
type Official struct {
	Status      string    `json:"status,omitempty"` // active, deprecated, deleted
	PublishedAt time.Time `json:"publishedAt,omitzero"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
	IsLatest    bool      `json:"isLatest,omitempty"`
}

// serverList is GET /v0.1/servers's answer.
type serverList struct {
	Servers  []Entry `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor,omitempty"`
		Count      int    `json:"count,omitempty"`
	} `json:"metadata"`
}

// Options configure New.
type Options struct {
	// URL is the registry's base URL ([mcp] registry); "" means
	// config.DefaultRegistry.
	URL string
	// CacheDir keeps the registry's answers (otter's cache directory,
	// config.Paths.CacheDir); "" keeps none.
	CacheDir string
	// UserAgent names otter and its version in each request.
	UserAgent string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Client asks one registry. Its methods are safe for concurrent use.
type Client struct {
	base  *url.URL
	name  string // the base URL, for messages
	http  *http.Client
	cache *cache
	ua    string
	now   func() time.Time
}

// New returns a client of the registry o.URL names.
func New(o Options) (*Client, error) {
	raw := strings.TrimRight(o.URL, "/")
	configured := raw != ""
	if !configured {
		raw = config.DefaultRegistry
	}
	u, err := safehttp.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("the MCP Registry's URL: %w", err)
	}
	policy, err := safehttp.NewPolicy(nil)
	if err != nil {
		return nil, err
	}
	safe, err := policy.Transport(safehttp.ClientOptions{MaxBodyBytes: maxBody})
	if err != nil {
		return nil, err
	}
	var rt http.RoundTripper = safe
	if configured {
		// The person named this registry (a company's is often on a private
		// network): its host is reached as it is; any other host must be
		// public.
		rt = &splitTransport{host: u.Host, trusted: &http.Transport{Proxy: http.ProxyFromEnvironment}, other: safe}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	c := &Client{base: u, name: raw, ua: o.UserAgent, now: now,
		http: &http.Client{Transport: rt, Timeout: 30 * time.Second}}
	if o.CacheDir != "" {
		c.cache = &cache{dir: o.CacheDir, now: now}
	}
	return c, nil
}

// URL is the registry's base URL.
func (c *Client) URL() string { return c.name }

// splitTransport sends requests to the configured registry's host through
// trusted and every other request (a redirect elsewhere) through other.
type splitTransport struct {
	host           string
	trusted, other http.RoundTripper
}

func (t *splitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == t.host {
		return t.trusted.RoundTrip(req)
	}
	return t.other.RoundTrip(req)
}

// Cached says that an answer came from the cache because the registry
// could not be reached: when it was fetched, and why the registry failed.
type Cached struct {
	FetchedAt time.Time
	Err       error
}

// Result is what Search found: the servers, best first as the registry
// ordered them, and Cached when the cache answered (nil when the registry
// did).
type Result struct {
	Servers []Entry
	Cached  *Cached
	// More: the registry has more servers than the limit let through.
	More bool
}

// Search lists the latest version of each server whose name holds query
// (the registry's search: a substring of the name), up to limit (≤ 0: 30),
// following the registry's pages. When the registry cannot be reached,
// the answer last cached for the same search is used, or else every cached
// server whose name holds query, and Cached says so; with nothing cached
// the error is an *UnreachableError.
func (c *Client) Search(ctx context.Context, query string, limit int) (*Result, error) {
	if limit <= 0 {
		limit = 30
	}
	res := &Result{}
	seen := map[string]bool{}
	cursor := ""
	for {
		q := url.Values{"search": {query}, "version": {"latest"}, "limit": {strconv.Itoa(min(pageSize, limit))}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var list serverList
		cached, err := c.get(ctx, "/v0.1/servers", q, &list)
		if err != nil {
			var ue *UnreachableError
			if cursor == "" && errors.As(err, &ue) {
				return c.searchCache(query, limit, ue)
			}
			return nil, err
		}
		if cached != nil && (res.Cached == nil || cached.FetchedAt.Before(res.Cached.FetchedAt)) {
			res.Cached = cached
		}
		for _, e := range list.Servers {
			if seen[e.Server.Name] || (e.Meta.Official != nil && e.Meta.Official.Status == "deleted") {
				continue
			}
			seen[e.Server.Name] = true
			if len(res.Servers) == limit {
				res.More = true
				return res, nil
			}
			res.Servers = append(res.Servers, e)
		}
		next := list.Metadata.NextCursor
		if next == "" || next == cursor {
			return res, nil
		}
		cursor = next
	}
}

// searchCache answers a search from every cached list, when the registry
// could not be reached.
func (c *Client) searchCache(query string, limit int, why *UnreachableError) (*Result, error) {
	var found []Entry
	oldest := time.Time{}
	if c.cache != nil {
		found, oldest = c.cache.servers(c.name, func(e Entry) bool {
			return strings.Contains(strings.ToLower(e.Server.Name), strings.ToLower(query))
		})
	}
	if len(found) == 0 {
		return nil, why
	}
	res := &Result{Cached: &Cached{FetchedAt: oldest, Err: why.Err}}
	if len(found) > limit {
		found, res.More = found[:limit], true
	}
	res.Servers = found
	return res, nil
}

// Get returns the latest version of the server called name (its full
// registry name, "io.github.owner/server"): an *NotFoundError when the
// registry has none. Offline, the cached answer serves, or a cached list
// that holds it.
func (c *Client) Get(ctx context.Context, name string) (*Entry, *Cached, error) {
	var e Entry
	cached, err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions/latest", nil, &e)
	var ue *UnreachableError
	if errors.As(err, &ue) && c.cache != nil {
		found, at := c.cache.servers(c.name, func(e Entry) bool { return e.Server.Name == name })
		if len(found) > 0 {
			return &found[0], &Cached{FetchedAt: at, Err: ue.Err}, nil
		}
	}
	if nf, ok := errors.AsType[*NotFoundError](err); ok {
		nf.Name = name
	}
	if err != nil {
		return nil, nil, err
	}
	return &e, cached, nil
}

// get fetches path?q from the registry (or its cache) into v; path's
// segments are escaped already.
func (c *Client) get(ctx context.Context, path string, q url.Values, v any) (*Cached, error) {
	u := strings.TrimRight(c.base.String(), "/") + path
	if q != nil {
		u += "?" + q.Encode()
	}
	body, cached, err := c.fetch(ctx, u)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("the MCP Registry at %s answered %s with JSON otter cannot read: %w", c.name, path, err)
	}
	return cached, nil
}

// fetch GETs u, through the cache: a fresh cached answer without asking,
// a stale one revalidated, and a cached one when the registry cannot be
// reached (Cached set).
func (c *Client) fetch(ctx context.Context, u string) ([]byte, *Cached, error) {
	var hit *cacheEntry
	if c.cache != nil {
		hit = c.cache.load(u)
		if hit != nil && hit.fresh(c.now()) {
			return hit.Body, nil, nil
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if c.ua != "" {
		req.Header.Set("User-Agent", c.ua)
	}
	if hit != nil {
		if hit.ETag != "" {
			req.Header.Set("If-None-Match", hit.ETag)
		}
		if hit.LastModified != "" {
			req.Header.Set("If-Modified-Since", hit.LastModified)
		}
	}
	offline := func(err error) ([]byte, *Cached, error) {
		if hit != nil {
			return hit.Body, &Cached{FetchedAt: hit.Fetched, Err: err}, nil
		}
		return nil, nil, &UnreachableError{Registry: c.name, Err: err}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return offline(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	switch {
	case err != nil:
		return offline(err)
	case len(body) > maxBody:
		return nil, nil, fmt.Errorf("the MCP Registry at %s answered with more than %d MB", c.name, maxBody>>20)
	case resp.StatusCode == http.StatusNotModified && hit != nil:
		c.cache.revalidated(hit, resp.Header)
		return hit.Body, nil, nil
	case resp.StatusCode >= 500:
		return offline(fmt.Errorf("%s", resp.Status))
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil, &NotFoundError{Registry: c.name, URL: u}
	case resp.StatusCode != http.StatusOK:
		return nil, nil, &StatusError{Registry: c.name, Status: resp.Status, Message: errorMessage(body)}
	}
	if c.cache != nil {
		c.cache.store(u, body, resp.Header)
	}
	return body, nil, nil
}

// errorMessage is the error a registry's JSON answer gives ({"error": …}
// or a problem document's detail), cut to one line.
func errorMessage(body []byte) string {
	var e struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
		Title  string `json:"title"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	msg := e.Error
	if msg == "" {
		msg = strings.TrimSpace(e.Title + ": " + e.Detail)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return strings.Trim(msg, ": ")
}

// UnreachableError is a registry that did not answer (a network error, a
// timeout, a 5xx) when nothing cached could stand in for it.
type UnreachableError struct {
	Registry string
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the MCP Registry at %s cannot be reached (%v), and otter has nothing cached for this yet", e.Registry, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// NotFoundError is a server the registry does not list.
type NotFoundError struct {
	Registry string
	URL      string
	Name     string // set by the caller that knows which server was asked for
}

func (e *NotFoundError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("the MCP Registry at %s has no server named %q", e.Registry, e.Name)
	}
	return fmt.Sprintf("the MCP Registry at %s has no %s", e.Registry, e.URL)
}

// StatusError is an answer other than 200 or 404 (a 400 for a bad search,
// a 401 from a registry that wants credentials).
type StatusError struct {
	Registry string
	Status   string
	Message  string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("the MCP Registry at %s answered %s", e.Registry, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}
