package oauth

import (
	"context"
	"crypto/rand"
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

	"github.com/zalando/go-keyring"
	"golang.org/x/oauth2"

	"github.com/otter-sh/otter/internal/filelock"
)

// recordVersion is the format version of a token file.
const recordVersion = 1

// record is what otter keeps for one server URL: the token, the OAuth client
// it was issued to (so that a later process can refresh it), and the dynamic
// client registrations made for the server (so that a new login does not
// register otter again). It is stored as JSON in the OS keychain or in a
// file only the user can read (see store), and is never printed or logged.
type record struct {
	Version   int    `json:"version"`
	ServerURL string `json:"server_url"`
	// Token is nil when there is no usable token (never logged in, logged
	// out, or the refresh token was rejected).
	Token *oauth2.Token `json:"token,omitempty"`
	// Scope is the scope the token was granted, as the token endpoint said.
	Scope string `json:"scope,omitempty"`
	// WantScope are scopes the server demanded (403 insufficient_scope)
	// that Token does not grant: the next login asks for them.
	WantScope string `json:"want_scope,omitempty"`
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
	// Resource is the resource parameter (RFC 8707) of the login, sent
	// again with every refresh.
	Resource string `json:"resource,omitempty"`
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

// store keeps one record per server URL, as JSON, in the OS keychain where
// one is available (see $OTTER_TOKEN_STORE), else in dir in a file named by
// the URL's SHA-256 with mode 0600.
//
// A record in the keychain has a marker file in dir instead
// (<hash>.keychain, no secrets) that names the keychain entry and changes
// with every write. From the files alone a process learns whether there is
// a record at all and whether the copy it read before is still current, so
// it does not ask the keychain (a program run per call on macOS, a D-Bus
// round trip on Linux) each time a server's status is shown. If both a
// marker and a file exist, the newer one (by updated_at) holds the record.
//
// Every read-modify-write, wherever the record is, happens under an
// exclusive lock on a lock file in dir, so two otter processes never lose
// each other's updates (e.g. a rotated refresh token).
type store struct {
	dir    string
	logger *slog.Logger
	mode   tokenStoreMode
	kc     *keychain

	warned  sync.Map  // problems already reported, by key: corrupt files, unreadable keychain entries
	offOnce sync.Once // "not using the keychain" reported
	copies  sync.Map  // serverURL → keychainCopy: the last value read from or written to the keychain
}

// keychainCopy is a keychain value and the marker generation it belongs to.
type keychainCopy struct{ generation, value string }

// keychainMarker is the content of a marker file.
type keychainMarker struct {
	Version   int    `json:"version"`
	ServerURL string `json:"server_url"`
	Service   string `json:"keychain_service"`
	Account   string `json:"keychain_account"`
	// Generation changes with every write of the keychain entry.
	Generation string    `json:"generation"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// newStore returns the store in dir, using the keychain as
// $OTTER_TOKEN_STORE says.
func newStore(dir string, logger *slog.Logger) *store {
	return newStoreWith(dir, logger, tokenStoreModeFromEnv(logger), systemKeychain())
}

func newStoreWith(dir string, logger *slog.Logger, mode tokenStoreMode, kc *keychain) *store {
	return &store{dir: dir, logger: logger, mode: mode, kc: kc}
}

// key returns the file name stem for a server URL.
func key(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return hex.EncodeToString(sum[:])
}

// path is the file that holds serverURL's record when it is not in the
// keychain.
func (s *store) path(serverURL string) string {
	return filepath.Join(s.dir, key(serverURL)+".json")
}

// markerPath is the marker file of serverURL's keychain entry.
func (s *store) markerPath(serverURL string) string {
	return filepath.Join(s.dir, key(serverURL)+".keychain")
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
	if err := filelock.Lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock token file %s: %w", name, err)
	}
	return func() {
		filelock.Unlock(f)
		f.Close()
	}, nil
}

// once logs msg the first time key is reported.
func (s *store) once(level slog.Level, key, msg string, args ...any) {
	if _, done := s.warned.LoadOrStore(key, struct{}{}); !done {
		s.logger.Log(context.Background(), level, msg, args...)
	}
}

// forgetProblems lets the problems reported for serverURL be reported
// again, after its record was written.
func (s *store) forgetProblems(serverURL string) {
	for _, k := range []string{s.path(serverURL), s.markerPath(serverURL), "keychain:" + serverURL, "set:" + serverURL} {
		s.warned.Delete(k)
	}
}

// useKeychain reports why records are not to be kept in the keychain, or
// nil. In auto mode the first reason is logged.
func (s *store) useKeychain() error {
	if s.mode == modeFile {
		return errFileMode
	}
	err := s.kc.available()
	if err != nil && s.mode == modeAuto {
		s.offOnce.Do(func() {
			s.logger.Info("oauth: not using the OS keychain; OAuth tokens are kept in files", "dir", s.dir, "reason", err)
		})
	}
	return err
}

// load reads serverURL's record. It returns nil, nil if there is none. A
// record that cannot be parsed or read from the keychain is reported in
// the log (once) and treated as absent, so that the person simply logs in
// again.
func (s *store) load(serverURL string) (*record, error) {
	return s.read(serverURL, false)
}

// read is load; locked says the caller holds the lock, and then a keychain
// entry is read afresh rather than taken from the copy of its generation.
func (s *store) read(serverURL string, locked bool) (*record, error) {
	// The file first: a writer moving the record into the keychain writes
	// the marker before it removes the file.
	fileRec, err := s.readFile(serverURL)
	if err != nil {
		return nil, err
	}
	m, _, err := s.readMarker(serverURL)
	if err != nil {
		return nil, err
	}
	if m == nil || (fileRec != nil && fileRec.UpdatedAt.After(m.UpdatedAt)) {
		return fileRec, nil
	}
	return s.readKeychain(serverURL, m, locked), nil
}

// readFile reads serverURL's file; nil, nil if there is none or it is
// corrupt.
func (s *store) readFile(serverURL string) (*record, error) {
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
	rec, err := decodeRecord(data, serverURL)
	if err != nil {
		s.once(slog.LevelWarn, p, "oauth: ignoring a corrupt token file; the server will need a new login",
			"file", p, "server", serverURL, "err", err)
		return nil, nil
	}
	return rec, nil
}

// readMarker reads serverURL's marker file. exists is true for a corrupt
// one, which is reported and returned as nil.
func (s *store) readMarker(serverURL string) (m *keychainMarker, exists bool, err error) {
	p := s.markerPath(serverURL)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read token marker file: %w", err)
	}
	m = new(keychainMarker)
	err = json.Unmarshal(data, m)
	if err == nil && m.ServerURL != serverURL {
		err = fmt.Errorf("it belongs to %q", m.ServerURL)
	}
	if err == nil && m.Generation == "" {
		err = errors.New("it has no generation")
	}
	if err != nil {
		s.once(slog.LevelWarn, p, "oauth: ignoring a corrupt token marker file; the server will need a new login",
			"file", p, "server", serverURL, "err", err)
		return nil, true, nil
	}
	return m, true, nil
}

// readKeychain reads serverURL's record from the keychain entry marker m
// names; nil if it cannot be read or parsed (reported once).
func (s *store) readKeychain(serverURL string, m *keychainMarker, locked bool) *record {
	problem := "keychain:" + serverURL
	if err := s.useKeychain(); err != nil {
		s.once(slog.LevelWarn, problem, "oauth: this server's token is in the OS keychain, which otter cannot use now; the server will need a new login",
			"server", serverURL, "reason", err)
		return nil
	}
	var value string
	if c, ok := s.copies.Load(serverURL); ok && !locked && c.(keychainCopy).generation == m.Generation {
		value = c.(keychainCopy).value
	} else {
		v, err := s.kc.get(serverURL)
		if err != nil {
			msg := "oauth: could not read this server's token from the OS keychain; the server will need a new login"
			if errors.Is(err, keyring.ErrNotFound) {
				msg = "oauth: the OS keychain no longer has this server's token (removed there?); the server will need a new login"
			}
			s.once(slog.LevelWarn, problem, msg, "server", serverURL,
				"keychain_service", keychainService, "keychain_account", keychainAccount(serverURL), "err", err)
			return nil
		}
		value = v
		s.copies.Store(serverURL, keychainCopy{generation: m.Generation, value: v})
	}
	rec, err := decodeRecord([]byte(value), serverURL)
	if err != nil {
		s.once(slog.LevelWarn, problem, "oauth: ignoring a corrupt token in the OS keychain; the server will need a new login",
			"server", serverURL, "keychain_service", keychainService, "keychain_account", keychainAccount(serverURL), "err", err)
		return nil
	}
	return rec
}

// decodeRecord parses a stored record, which must be serverURL's.
func decodeRecord(data []byte, serverURL string) (*record, error) {
	var rec record
	err := json.Unmarshal(data, &rec)
	if err == nil && rec.ServerURL != serverURL {
		err = fmt.Errorf("it belongs to %q", rec.ServerURL)
	}
	if err != nil {
		return nil, err
	}
	return &rec, nil
}

// save writes rec for serverURL: into the keychain if it is in use and
// takes it (moving the record out of its file), else into the file. The
// caller holds the lock.
func (s *store) save(serverURL string, rec *record) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	rec.Version = recordVersion
	rec.ServerURL = serverURL
	rec.UpdatedAt = time.Now().UTC()
	if err := s.useKeychain(); err == nil {
		err := s.saveKeychain(serverURL, rec)
		if err == nil {
			return nil
		}
		if s.mode == modeKeychain {
			return fmt.Errorf("store the token in the OS keychain (%s=keychain; set it to auto to fall back to a file): %w", envTokenStore, err)
		}
		// E.g. a value larger than the Windows credential manager takes.
		s.once(slog.LevelInfo, "set:"+serverURL, "oauth: could not store this server's token in the OS keychain; keeping it in a file",
			"server", serverURL, "file", s.path(serverURL), "reason", err)
	} else if s.mode == modeKeychain {
		return fmt.Errorf("store the token: the OS keychain cannot be used (%s=keychain; set it to auto to fall back to a file): %w", envTokenStore, err)
	}
	return s.saveFile(serverURL, rec)
}

// saveKeychain stores rec in the keychain, then writes the marker, then
// removes the record's file.
func (s *store) saveKeychain(serverURL string, rec *record) error {
	data, err := json.Marshal(rec) // compact: keychains limit the size
	if err != nil {
		return fmt.Errorf("encode token: %w", err)
	}
	if err := s.kc.set(serverURL, string(data)); err != nil {
		return err
	}
	m := keychainMarker{
		Version:    recordVersion,
		ServerURL:  serverURL,
		Service:    keychainService,
		Account:    keychainAccount(serverURL),
		Generation: rand.Text(),
		UpdatedAt:  rec.UpdatedAt,
	}
	mdata, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode token marker: %w", err)
	}
	if err := s.writeFile(s.markerPath(serverURL), mdata); err != nil {
		return err
	}
	s.copies.Store(serverURL, keychainCopy{generation: m.Generation, value: string(data)})
	switch err := os.Remove(s.path(serverURL)); {
	case err == nil:
		s.logger.Info("oauth: moved this server's token from its file into the OS keychain", "server", serverURL)
	case !errors.Is(err, fs.ErrNotExist):
		// The marker is newer, so the file is ignored.
		s.logger.Warn("oauth: could not remove the old token file after storing the token in the OS keychain",
			"file", s.path(serverURL), "err", err)
	}
	s.forgetProblems(serverURL)
	return nil
}

// saveFile writes rec to serverURL's file. If the keychain holds an older
// copy and is in use, that copy is deleted; otherwise its marker stays, so
// that a later write or logout can delete it (the newer file wins reads).
func (s *store) saveFile(serverURL string, rec *record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode token file: %w", err)
	}
	if err := s.writeFile(s.path(serverURL), data); err != nil {
		return err
	}
	s.forgetProblems(serverURL)
	if _, err := os.Stat(s.markerPath(serverURL)); err != nil || s.useKeychain() != nil {
		return nil
	}
	if err := s.kc.delete(serverURL); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		s.logger.Info("oauth: could not delete the older token from the OS keychain", "server", serverURL, "err", err)
		return nil
	}
	os.Remove(s.markerPath(serverURL))
	s.copies.Delete(serverURL)
	return nil
}

// writeFile replaces the file at path atomically with data, mode 0600.
func (s *store) writeFile(path string, data []byte) error {
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
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
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
	rec, err := s.read(serverURL, true)
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

// remove deletes serverURL's record from the file and from the keychain.
// It reports whether there was one. The keychain is asked unless
// $OTTER_TOKEN_STORE=file and no marker says it holds a copy; if it holds
// one that cannot be deleted, the error says so and the marker stays.
func (s *store) remove(serverURL string) (bool, error) {
	unlock, err := s.lock(serverURL)
	if err != nil {
		return false, err
	}
	defer unlock()
	had := false
	_, statErr := os.Stat(s.markerPath(serverURL))
	marked := statErr == nil
	var kcErr error
	if marked || s.mode != modeFile {
		err := s.kc.available()
		if err == nil {
			err = s.kc.delete(serverURL)
		}
		switch {
		case err == nil:
			had = true
		case errors.Is(err, keyring.ErrNotFound):
		case marked:
			kcErr = fmt.Errorf("remove the token from the OS keychain (service %q, account %q; delete that entry there if this persists): %w",
				keychainService, keychainAccount(serverURL), err)
		}
	}
	s.copies.Delete(serverURL)
	paths := []string{s.path(serverURL)}
	if kcErr == nil {
		paths = append(paths, s.markerPath(serverURL))
	}
	for _, p := range paths {
		switch err := os.Remove(p); {
		case err == nil:
			had = had || p == s.path(serverURL)
		case !errors.Is(err, fs.ErrNotExist):
			return had, fmt.Errorf("remove token file: %w", err)
		}
	}
	s.forgetProblems(serverURL)
	return had, kcErr
}
