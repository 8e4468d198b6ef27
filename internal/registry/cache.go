package registry

// The cache of the registry's answers, one file per URL in the cache
// directory's registry/, kept as the answer's headers allow: Cache-Control
// no-store keeps nothing; max-age (less Age), or else Expires, says how
// long it is fresh; a stale answer is asked again with If-None-Match or
// If-Modified-Since. An answer without those headers is stale at once: it
// is asked again every time, and used only when the registry cannot be
// reached. Files are written through a temporary file renamed into place.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type cache struct {
	dir string // the cache directory; entries go in its registry/
	now func() time.Time
}

// cacheEntry is one cached answer.
type cacheEntry struct {
	URL          string          `json:"url"`
	Fetched      time.Time       `json:"fetched"`
	Expires      time.Time       `json:"expires"`
	ETag         string          `json:"etag,omitempty"`
	LastModified string          `json:"last_modified,omitempty"`
	Body         json.RawMessage `json:"body"`
}

func (e *cacheEntry) fresh(now time.Time) bool { return now.Before(e.Expires) }

func (c *cache) file(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.dir, "registry", hex.EncodeToString(sum[:12])+".json")
}

// load returns u's cached answer, or nil.
func (c *cache) load(u string) *cacheEntry {
	data, err := os.ReadFile(c.file(u))
	if err != nil {
		return nil
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.URL != u || len(e.Body) == 0 {
		return nil
	}
	return &e
}

// store keeps body as u's answer, as h allows.
func (c *cache) store(u string, body []byte, h http.Header) {
	now := c.now()
	expires, keep := freshUntil(h, now)
	if !keep {
		_ = os.Remove(c.file(u)) // no-store: nor keep an older one
		return
	}
	if !json.Valid(body) {
		return
	}
	c.write(&cacheEntry{URL: u, Fetched: now, Expires: expires, ETag: h.Get("ETag"), LastModified: h.Get("Last-Modified"), Body: body})
}

// revalidated renews e after the registry answered 304 Not Modified with
// headers h.
func (c *cache) revalidated(e *cacheEntry, h http.Header) {
	now := c.now()
	expires, keep := freshUntil(h, now)
	if !keep {
		_ = os.Remove(c.file(e.URL))
		return
	}
	e.Fetched, e.Expires = now, expires
	if v := h.Get("ETag"); v != "" {
		e.ETag = v
	}
	c.write(e)
}

func (c *cache) write(e *cacheEntry) {
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	dir := filepath.Join(c.dir, "registry")
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".answer-*.tmp")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return
	}
	_ = os.Rename(tmp.Name(), c.file(e.URL))
}

// servers returns the servers of every cached answer of the registry at
// base that keep matches — lists and single servers — the latest version
// of each, by name, and when the oldest answer they come from was fetched.
func (c *cache) servers(base string, keep func(Entry) bool) ([]Entry, time.Time) {
	files, _ := filepath.Glob(filepath.Join(c.dir, "registry", "*.json"))
	byName := map[string]Entry{}
	from := map[string]time.Time{}
	prefix := strings.TrimRight(base, "/") + "/v0.1/servers"
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var e cacheEntry
		if json.Unmarshal(data, &e) != nil || !strings.HasPrefix(e.URL, prefix) {
			continue
		}
		var list serverList
		if json.Unmarshal(e.Body, &list) != nil || list.Servers == nil {
			var one Entry
			if json.Unmarshal(e.Body, &one) != nil || one.Server.Name == "" {
				continue
			}
			list.Servers = []Entry{one}
		}
		for _, s := range list.Servers {
			if !keep(s) || (s.Meta.Official != nil && s.Meta.Official.Status == "deleted") {
				continue
			}
			if have, ok := byName[s.Server.Name]; ok && !newer(s, have) {
				continue
			}
			byName[s.Server.Name], from[s.Server.Name] = s, e.Fetched
		}
	}
	names := make([]string, 0, len(byName))
	var oldest time.Time
	for n := range byName {
		names = append(names, n)
		if t := from[n]; oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	slices.Sort(names)
	out := make([]Entry, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out, oldest
}

// newer reports whether a is a later version than b: the registry's
// latest, else the later published.
func newer(a, b Entry) bool {
	la, lb := a.Meta.Official != nil && a.Meta.Official.IsLatest, b.Meta.Official != nil && b.Meta.Official.IsLatest
	if la != lb {
		return la
	}
	if a.Meta.Official != nil && b.Meta.Official != nil {
		return a.Meta.Official.PublishedAt.After(b.Meta.Official.PublishedAt)
	}
	return false
}

// freshUntil reads h's caching headers: until when the answer is fresh,
// and whether it may be kept at all.
func freshUntil(h http.Header, now time.Time) (time.Time, bool) {
	maxAge, hasMaxAge := -1, false
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-store":
				return time.Time{}, false
			case "no-cache":
				maxAge, hasMaxAge = 0, true
			case "max-age":
				if n, err := strconv.Atoi(strings.Trim(val, `"`)); err == nil && !hasMaxAge {
					maxAge, hasMaxAge = max(n, 0), true
				}
			}
		}
	}
	if hasMaxAge {
		age, _ := strconv.Atoi(h.Get("Age"))
		return now.Add(time.Duration(maxAge-max(age, 0)) * time.Second), true
	}
	if exp, err := http.ParseTime(h.Get("Expires")); err == nil {
		if date, err := http.ParseTime(h.Get("Date")); err == nil {
			return now.Add(exp.Sub(date)), true // the server's clock, not ours
		}
		return exp, true
	}
	return now, true
}
