package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// recordVersion is the format version of a token file.
const recordVersion = 1

// record is what otter keeps for one server URL: the token, the OAuth client
// it was issued to (so that a later process can refresh it), and the dynamic
// client registrations made for the server (so that a new login does not
// register otter again). It is stored as JSON in a file only the user can
// read, and is never printed or logged.
type record struct {
	Version   int    `json:"version"`
	ServerURL string `json:"server_url"`
	// Token is nil when there is no usable token (never logged in, logged
	// out, or the refresh token was rejected).
	Token *oauth2.Token `json:"token,omitempty"`
	// Scope is the scope the token was granted, as the token endpoint said.
	Scope string `json:"scope,omitempty"`
	// Client is the OAuth client configuration the token belongs to.
	Client *clientInfo `json:"client,omitempty"`
	// RedirectURL is the loopback redirect URL of the last login; otter
	// reuses its port so that a registered redirect URI stays valid.
	RedirectURL string `json:"redirect_url,omitempty"`
	// Registrations are the dynamic client registration responses otter
	// received for this server, replayed instead of registering again.
	Registrations []registration `json:"registrations,omitempty"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// clientInfo is the part of an oauth2.Config needed to refresh a token.
type clientInfo struct {
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
}

func clientInfoFrom(cfg *oauth2.Config) *clientInfo {
	return &clientInfo{
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		AuthURL:      cfg.Endpoint.AuthURL,
		TokenURL:     cfg.Endpoint.TokenURL,
		AuthStyle:    cfg.Endpoint.AuthStyle,
		Scopes:       cfg.Scopes,
	}
}

func (c *clientInfo) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: c.AuthStyle},
		Scopes:       c.Scopes,
	}
}

// registration is one dynamic client registration (RFC 7591): the request
// otter sent to Endpoint and the server's response.
type registration struct {
	Endpoint string          `json:"endpoint"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

// store keeps one record per server URL in dir, a file per URL named by the
// URL's SHA-256, next to a lock file. Every read-modify-write happens under
// an exclusive lock on the lock file, so two otter processes never lose each
// other's updates (e.g. a rotated refresh token).
type store struct {
	dir    string
	logger *slog.Logger

	warned sync.Map // path → struct{}: corrupt files already reported
}

func newStore(dir string, logger *slog.Logger) *store {
	return &store{dir: dir, logger: logger}
}

// key returns the file name stem for a server URL.
func key(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return hex.EncodeToString(sum[:])
}

func (s *store) path(serverURL string) string {
	return filepath.Join(s.dir, key(serverURL)+".json")
}

// ensureDir creates the token directory with mode 0700, and tightens it if
// it already exists with looser permissions.
func (s *store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create token directory: %w", err)
	}
	fi, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(s.dir, 0o700); err != nil {
			return fmt.Errorf("restrict token directory %s to its owner: %w", s.dir, err)
		}
	}
	return nil
}

// lock takes the exclusive lock for serverURL's record. It blocks until the
// lock is free.
func (s *store) lock(serverURL string) (unlock func(), err error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	name := filepath.Join(s.dir, key(serverURL)+".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open token lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock token file %s: %w", name, err)
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}

// load reads serverURL's record. It returns nil, nil if there is none. A
// file that cannot be parsed is reported in the log (once per file) and
// treated as absent, so that the person simply logs in again.
func (s *store) load(serverURL string) (*record, error) {
	p := s.path(serverURL)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read token file: %w", err)
	}
	if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(p, 0o600); err == nil {
			s.logger.Warn("oauth: the token file was readable by others; restricted it to its owner", "file", p)
		}
	}
	var rec record
	err = json.Unmarshal(data, &rec)
	if err == nil && rec.ServerURL != serverURL {
		err = fmt.Errorf("it belongs to %q", rec.ServerURL)
	}
	if err != nil {
		if _, done := s.warned.LoadOrStore(p, struct{}{}); !done {
			s.logger.Warn("oauth: ignoring a corrupt token file; the server will need a new login",
				"file", p, "server", serverURL, "err", err)
		}
		return nil, nil
	}
	return &rec, nil
}

// save writes rec for serverURL atomically with mode 0600. The caller holds
// the lock.
func (s *store) save(serverURL string, rec *record) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	rec.Version = recordVersion
	rec.ServerURL = serverURL
	rec.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode token file: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".tmp-*") // created with mode 0600
	if err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write token file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write token file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	if err := os.Rename(tmp, s.path(serverURL)); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	s.warned.Delete(s.path(serverURL))
	return nil
}

// update runs fn on serverURL's record (a new empty one if there is none)
// under the lock, and saves it if fn reports a change.
func (s *store) update(serverURL string, fn func(rec *record) (changed bool, err error)) error {
	unlock, err := s.lock(serverURL)
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := s.load(serverURL)
	if err != nil {
		return err
	}
	if rec == nil {
		rec = &record{}
	}
	changed, err := fn(rec)
	if err != nil {
		return err
	}
	if !changed {
		return nil
	}
	return s.save(serverURL, rec)
}

// remove deletes serverURL's record. It reports whether there was one.
func (s *store) remove(serverURL string) (bool, error) {
	unlock, err := s.lock(serverURL)
	if err != nil {
		return false, err
	}
	defer unlock()
	err = os.Remove(s.path(serverURL))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove token file: %w", err)
	}
	s.warned.Delete(s.path(serverURL))
	return true, nil
}
