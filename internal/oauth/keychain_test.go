package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
	"golang.org/x/oauth2"

	"github.com/otter-sh/otter/internal/config"
	"github.com/otter-sh/otter/internal/oauth/oauthtest"
)

const kcServerURL = "https://mcp.example.com/mcp?tenant=acme"

// mockKeyring makes go-keyring's in-memory mock the OS keychain for the
// test (or, with err, a keychain whose every call fails with err).
func mockKeyring(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		keyring.MockInitWithError(err)
	} else {
		keyring.MockInit()
	}
	t.Cleanup(func() { keyring.MockInitWithError(errors.New("go-keyring mock of a finished test")) })
}

// testLogger logs at debug level into a buffer.
func testLogger() (*slog.Logger, *syncBuffer) {
	var b syncBuffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

// kcStore is a store in dir as one otter process would have it: its own
// keychain prober on backend b.
func kcStore(dir string, logger *slog.Logger, mode tokenStoreMode, b keyringBackend) *store {
	return newStoreWith(dir, logger, mode, &keychain{backend: b, timeout: 10 * time.Second})
}

// putToken stores a token for serverURL as a login would.
func putToken(t *testing.T, st *store, serverURL string, tok *oauth2.Token) {
	t.Helper()
	err := st.update(serverURL, func(rec *record) (bool, error) {
		rec.Token = tok
		rec.Client = &clientInfo{ClientID: "c", TokenURL: "https://as.example.com/token"}
		return true, nil
	})
	if err != nil {
		t.Fatalf("store a token: %v", err)
	}
}

// inKeychain returns the record go-keyring holds for serverURL, nil if none.
func inKeychain(t *testing.T, serverURL string) *record {
	t.Helper()
	v, err := keyring.Get(keychainService, keychainAccount(serverURL))
	if errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("keyring.Get: %v", err)
	}
	var rec record
	if err := json.Unmarshal([]byte(v), &rec); err != nil {
		t.Fatalf("keychain value: %v", err)
	}
	return &rec
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func noTokensIn(t *testing.T, what, text string, toks ...*oauth2.Token) {
	t.Helper()
	for _, tok := range toks {
		if strings.Contains(text, tok.AccessToken) || strings.Contains(text, tok.RefreshToken) {
			t.Errorf("%s shows a token:\n%s", what, text)
		}
	}
}

// TestKeychainPreferred: with a working keychain, auto keeps the record
// there and writes no token file; another process reads it back.
func TestKeychainPreferred(t *testing.T) {
	mockKeyring(t, nil)
	dir := t.TempDir()
	logger, logs := testLogger()
	st := kcStore(dir, logger, modeAuto, osKeyring{})
	tok := &oauth2.Token{AccessToken: "at-secret-1", RefreshToken: "rt-secret-1", Expiry: time.Now().Add(time.Hour).Round(time.Second)}
	putToken(t, st, kcServerURL, tok)

	rec := inKeychain(t, kcServerURL)
	if rec == nil || rec.Token.RefreshToken != tok.RefreshToken || rec.ServerURL != kcServerURL {
		t.Fatalf("keychain entry (service %q, account %q) = %+v, want the record", keychainService, keychainAccount(kcServerURL), rec)
	}
	if exists(t, st.path(kcServerURL)) {
		t.Error("a token file was written although the keychain took the record")
	}
	marker, err := os.ReadFile(st.markerPath(kcServerURL))
	if err != nil {
		t.Fatalf("marker file: %v", err)
	}
	if fi, _ := os.Stat(st.markerPath(kcServerURL)); fi.Mode().Perm() != 0o600 {
		t.Errorf("marker file mode = %v, want 0600", fi.Mode().Perm())
	}
	if !strings.Contains(string(marker), keychainAccount(kcServerURL)) {
		t.Errorf("the marker file does not name the keychain entry:\n%s", marker)
	}
	noTokensIn(t, "the marker file", string(marker), tok)

	// Another process: a new store and keychain prober.
	a := New(Options{Paths: config.Paths{DataDir: filepath.Dir(dir)}, Logger: logger})
	a.store = kcStore(dir, logger, modeAuto, osKeyring{})
	srv := config.Server{Name: "s", URL: kcServerURL}
	if !a.LoggedIn(srv) || !a.TokenExpiry(srv).Equal(tok.Expiry) {
		t.Fatalf("another process: LoggedIn %v, expiry %v; want the stored token expiring %v", a.LoggedIn(srv), a.TokenExpiry(srv), tok.Expiry)
	}
	noTokensIn(t, "the log", logs.String(), tok)
}

// countingKeyring counts the calls that reach a backend.
type countingKeyring struct {
	keyringBackend
	gets, sets atomic.Int32
}

func (c *countingKeyring) Get(service, user string) (string, error) {
	c.gets.Add(1)
	return c.keyringBackend.Get(service, user)
}

func (c *countingKeyring) Set(service, user, value string) error {
	c.sets.Add(1)
	return c.keyringBackend.Set(service, user, value)
}

// TestKeychainReadsFollowMarker: repeated reads (a status shown on every
// redraw) do not ask the keychain again until another process wrote; a
// server without a token never asks it.
func TestKeychainReadsFollowMarker(t *testing.T) {
	mockKeyring(t, nil)
	dir := t.TempDir()
	logger, _ := testLogger()
	writer := kcStore(dir, logger, modeAuto, osKeyring{})
	putToken(t, writer, kcServerURL, &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1"})

	b := &countingKeyring{keyringBackend: osKeyring{}}
	reader := kcStore(dir, logger, modeAuto, b)
	if rec, _ := reader.load("https://other.example.com/mcp"); rec != nil {
		t.Fatal("a server with nothing stored has a record")
	}
	if n := b.gets.Load(); n != 0 {
		t.Errorf("looking up a server with nothing stored asked the keychain %d times, want 0", n)
	}
	for range 3 {
		if rec, err := reader.load(kcServerURL); err != nil || rec == nil || rec.Token.AccessToken != "at-1" {
			t.Fatalf("load: %+v, %v", rec, err)
		}
	}
	if n := b.gets.Load(); n != 2 { // the probe and one read
		t.Errorf("three loads of an unchanged record made %d keychain reads, want 2 (probe + one)", n)
	}
	putToken(t, writer, kcServerURL, &oauth2.Token{AccessToken: "at-2", RefreshToken: "rt-2"})
	if rec, err := reader.load(kcServerURL); err != nil || rec == nil || rec.Token.AccessToken != "at-2" {
		t.Fatalf("after another process wrote: %+v, %v; want its token", rec, err)
	}
	// Under the lock the keychain is always read afresh.
	before := b.gets.Load()
	if err := reader.update(kcServerURL, func(*record) (bool, error) { return false, nil }); err != nil {
		t.Fatal(err)
	}
	if b.gets.Load() != before+1 {
		t.Error("a locked read used the remembered copy instead of the keychain")
	}
}

// TestKeychainErrorFallsBackToFile: a keychain whose calls fail (no Secret
// Service) makes auto use the file, saying why once; with
// OTTER_TOKEN_STORE=keychain the write fails instead.
func TestKeychainErrorFallsBackToFile(t *testing.T) {
	mockKeyring(t, errors.New("The name org.freedesktop.secrets was not provided by any .service files"))
	dir := t.TempDir()
	logger, logs := testLogger()
	st := kcStore(dir, logger, modeAuto, osKeyring{})
	tok := &oauth2.Token{AccessToken: "at-secret-1", RefreshToken: "rt-secret-1"}
	putToken(t, st, kcServerURL, tok)
	putToken(t, st, kcServerURL, tok)

	fi, err := os.Stat(st.path(kcServerURL))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v; want mode 0600", fi, err)
	}
	if exists(t, st.markerPath(kcServerURL)) {
		t.Error("a keychain marker was written although the keychain failed")
	}
	if rec, _ := st.load(kcServerURL); rec == nil || rec.Token.RefreshToken != tok.RefreshToken {
		t.Fatalf("load = %+v, want the token from the file", rec)
	}
	if n := strings.Count(logs.String(), "not using the OS keychain"); n != 1 || !strings.Contains(logs.String(), "org.freedesktop.secrets") || !strings.Contains(logs.String(), "level=INFO") {
		t.Errorf("want one info line saying why the keychain is not used, got %d:\n%s", n, logs.String())
	}
	noTokensIn(t, "the log", logs.String(), tok)

	strict := kcStore(t.TempDir(), logger, modeKeychain, osKeyring{})
	err = strict.update(kcServerURL, func(rec *record) (bool, error) { rec.Token = tok; return true, nil })
	if err == nil || !strings.Contains(err.Error(), envTokenStore+"=keychain") || !strings.Contains(err.Error(), "org.freedesktop.secrets") {
		t.Fatalf("OTTER_TOKEN_STORE=keychain without a keychain: got %v, want an error naming the setting and the reason", err)
	}
	if exists(t, strict.path(kcServerURL)) {
		t.Error("OTTER_TOKEN_STORE=keychain wrote a token file")
	}
}

// stuckKeyring is a keychain whose calls of the kinds in stuck wait until
// release is closed (a Secret Service showing an unlock dialog); other Gets
// find nothing.
type stuckKeyring struct {
	stuck   map[string]bool // "get", "set", "delete"
	release chan struct{}
	calls   atomic.Int32
}

func (s *stuckKeyring) wait(op string) {
	s.calls.Add(1)
	if s.stuck[op] {
		<-s.release
	}
}

func (s *stuckKeyring) Get(string, string) (string, error) {
	s.wait("get")
	return "", keyring.ErrNotFound
}

func (s *stuckKeyring) Set(string, string, string) error {
	s.wait("set")
	return errors.New("the test released a stuck call")
}

func (s *stuckKeyring) Delete(string, string) error {
	s.wait("delete")
	return keyring.ErrNotFound
}

// TestKeychainTimeoutFallsBackToFile: a keychain that does not answer
// (locked, waiting for its password) costs one timeout, after which the
// process uses the file without asking it again.
func TestKeychainTimeoutFallsBackToFile(t *testing.T) {
	for _, op := range []string{"get", "set"} { // the probe hangs; the write hangs
		t.Run(op, func(t *testing.T) {
			b := &stuckKeyring{stuck: map[string]bool{op: true}, release: make(chan struct{})}
			t.Cleanup(func() { close(b.release) })
			dir := t.TempDir()
			logger, logs := testLogger()
			st := newStoreWith(dir, logger, modeAuto, &keychain{backend: b, timeout: 20 * time.Millisecond})
			putToken(t, st, kcServerURL, &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1"})
			if !exists(t, st.path(kcServerURL)) {
				t.Fatal("no token file after the keychain timed out")
			}
			if !strings.Contains(logs.String(), "did not answer") {
				t.Errorf("the log does not say the keychain did not answer:\n%s", logs.String())
			}
			calls := b.calls.Load()
			putToken(t, st, kcServerURL, &oauth2.Token{AccessToken: "at-2", RefreshToken: "rt-2"})
			if rec, _ := st.load(kcServerURL); rec == nil || rec.Token.AccessToken != "at-2" {
				t.Fatalf("load = %+v, want the second token from the file", rec)
			}
			if b.calls.Load() != calls {
				t.Errorf("the keychain was asked again after it timed out (%d calls, then %d)", calls, b.calls.Load())
			}
		})
	}
}

// TestKeychainMigratesFileOnWrite: a token file from before the keychain
// is read as it is and moves into the keychain on the next write.
func TestKeychainMigratesFileOnWrite(t *testing.T) {
	mockKeyring(t, nil)
	dir := t.TempDir()
	logger, logs := testLogger()
	putToken(t, kcStore(dir, logger, modeFile, osKeyring{}), kcServerURL, &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1"})
	if inKeychain(t, kcServerURL) != nil {
		t.Fatal("OTTER_TOKEN_STORE=file wrote into the keychain")
	}

	st := kcStore(dir, logger, modeAuto, osKeyring{})
	if rec, err := st.load(kcServerURL); err != nil || rec == nil || rec.Token.RefreshToken != "rt-1" {
		t.Fatalf("load of the old file: %+v, %v", rec, err)
	}
	if !exists(t, st.path(kcServerURL)) || inKeychain(t, kcServerURL) != nil {
		t.Fatal("a read moved the record")
	}
	err := st.update(kcServerURL, func(rec *record) (bool, error) {
		rec.Token = &oauth2.Token{AccessToken: "at-2", RefreshToken: rec.Token.RefreshToken}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec := inKeychain(t, kcServerURL); rec == nil || rec.Token.AccessToken != "at-2" || rec.Token.RefreshToken != "rt-1" || rec.Client == nil {
		t.Fatalf("keychain after the write = %+v, want the whole updated record", rec)
	}
	if exists(t, st.path(kcServerURL)) {
		t.Error("the token file is still there after the record moved into the keychain")
	}
	if !strings.Contains(logs.String(), "moved this server's token from its file into the OS keychain") {
		t.Errorf("the move is not logged:\n%s", logs.String())
	}
	if rec, _ := kcStore(dir, logger, modeAuto, osKeyring{}).load(kcServerURL); rec == nil || rec.Token.AccessToken != "at-2" {
		t.Fatalf("another process reads %+v, want the moved record", rec)
	}
}

// TestKeychainLogoutRemovesBoth: logout deletes the keychain entry, the
// file and the marker, in auto mode and, for a copy a marker names, with
// OTTER_TOKEN_STORE=file too.
func TestKeychainLogoutRemovesBoth(t *testing.T) {
	mockKeyring(t, nil)
	dir := t.TempDir()
	logger, _ := testLogger()
	auto := kcStore(dir, logger, modeAuto, osKeyring{})
	fileOnly := kcStore(dir, logger, modeFile, osKeyring{})
	putToken(t, auto, kcServerURL, &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1"})
	// A newer login with OTTER_TOKEN_STORE=file: now both hold a record.
	putToken(t, fileOnly, kcServerURL, &oauth2.Token{AccessToken: "at-2", RefreshToken: "rt-2"})
	if inKeychain(t, kcServerURL) == nil || !exists(t, auto.path(kcServerURL)) {
		t.Fatal("setup: want a record in the keychain and in the file")
	}
	if rec, _ := kcStore(dir, logger, modeAuto, osKeyring{}).load(kcServerURL); rec == nil || rec.Token.AccessToken != "at-2" {
		t.Fatalf("load with both present = %+v, want the newer (the file's)", rec)
	}

	had, err := auto.remove(kcServerURL)
	if err != nil || !had {
		t.Fatalf("logout: %v, %v", had, err)
	}
	if inKeychain(t, kcServerURL) != nil || exists(t, auto.path(kcServerURL)) || exists(t, auto.markerPath(kcServerURL)) {
		t.Fatal("logout left the keychain entry, the file or the marker")
	}
	if rec, _ := auto.load(kcServerURL); rec != nil {
		t.Fatal("a record is still loaded after logout")
	}
	if had, err := auto.remove(kcServerURL); had || err != nil {
		t.Fatalf("second logout: %v, %v; want nothing to remove and no error", had, err)
	}

	// OTTER_TOKEN_STORE=file still removes a keychain copy its marker names.
	putToken(t, auto, kcServerURL, &oauth2.Token{AccessToken: "at-3", RefreshToken: "rt-3"})
	if had, err := fileOnly.remove(kcServerURL); !had || err != nil {
		t.Fatalf("logout with OTTER_TOKEN_STORE=file: %v, %v", had, err)
	}
	if inKeychain(t, kcServerURL) != nil || exists(t, auto.markerPath(kcServerURL)) {
		t.Fatal("logout with OTTER_TOKEN_STORE=file left the keychain copy")
	}

	// A keychain that fails at logout: the error names the entry, and the
	// marker stays so that the next logout tries again.
	putToken(t, auto, kcServerURL, &oauth2.Token{AccessToken: "at-4", RefreshToken: "rt-4"})
	mockKeyring(t, errors.New("keychain is locked"))
	_, err = kcStore(dir, logger, modeAuto, &failAfterProbe{}).remove(kcServerURL)
	if err == nil || !strings.Contains(err.Error(), keychainAccount(kcServerURL)) || !strings.Contains(err.Error(), "keychain is locked") {
		t.Fatalf("logout with a failing keychain: got %v, want an error naming the entry and the reason", err)
	}
	if !exists(t, auto.markerPath(kcServerURL)) {
		t.Error("the marker of a keychain entry that could not be deleted was removed")
	}
}

// failAfterProbe is a keychain that answers the probe and then fails with
// go-keyring's (mocked) error.
type failAfterProbe struct{}

func (failAfterProbe) Get(service, user string) (string, error) {
	if user == keychainProbeAccount {
		return "", keyring.ErrNotFound
	}
	return osKeyring{}.Get(service, user)
}
func (failAfterProbe) Set(service, user, value string) error {
	return osKeyring{}.Set(service, user, value)
}
func (failAfterProbe) Delete(service, user string) error { return osKeyring{}.Delete(service, user) }

// TestKeychainCorruptValue: a damaged keychain value, or an entry deleted
// behind otter's back, is logged once and treated as no token; a new login
// replaces it.
func TestKeychainCorruptValue(t *testing.T) {
	mockKeyring(t, nil)
	dir := t.TempDir()
	logger, logs := testLogger()
	putToken(t, kcStore(dir, logger, modeAuto, osKeyring{}), kcServerURL, &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1"})
	if err := keyring.Set(keychainService, keychainAccount(kcServerURL), `{"version":1,"token":{"access_tok`); err != nil {
		t.Fatal(err)
	}
	st := kcStore(dir, logger, modeAuto, osKeyring{})
	for range 2 {
		if rec, err := st.load(kcServerURL); rec != nil || err != nil {
			t.Fatalf("load of a corrupt keychain value: %+v, %v; want nothing", rec, err)
		}
	}
	if n := strings.Count(logs.String(), "corrupt token in the OS keychain"); n != 1 || !strings.Contains(logs.String(), keychainAccount(kcServerURL)) {
		t.Errorf("want one log line naming the corrupt keychain entry, got %d:\n%s", n, logs.String())
	}
	putToken(t, st, kcServerURL, &oauth2.Token{AccessToken: "at-2", RefreshToken: "rt-2"})
	if rec, _ := st.load(kcServerURL); rec == nil || rec.Token.AccessToken != "at-2" {
		t.Fatalf("a new login did not replace the corrupt value: %+v", rec)
	}

	if err := keyring.Delete(keychainService, keychainAccount(kcServerURL)); err != nil {
		t.Fatal(err)
	}
	if rec, err := kcStore(dir, logger, modeAuto, osKeyring{}).load(kcServerURL); rec != nil || err != nil {
		t.Fatalf("load after the entry was deleted in the keychain: %+v, %v; want nothing", rec, err)
	}
	if !strings.Contains(logs.String(), "no longer has this server's token") {
		t.Errorf("the log does not say the keychain entry is gone:\n%s", logs.String())
	}
}

// smallKeyring refuses values over max bytes, like the Windows credential
// manager.
type smallKeyring struct {
	keyringBackend
	max int
}

func (s smallKeyring) Set(service, user, value string) error {
	if len(value) > s.max {
		return keyring.ErrSetDataTooBig
	}
	return s.keyringBackend.Set(service, user, value)
}

// TestKeychainValueTooBig: a record the keychain refuses is kept in the
// file, and the keychain's older copy is deleted.
func TestKeychainValueTooBig(t *testing.T) {
	mockKeyring(t, nil)
	dir := t.TempDir()
	logger, logs := testLogger()
	st := kcStore(dir, logger, modeAuto, smallKeyring{osKeyring{}, 600})
	putToken(t, st, kcServerURL, &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1"})
	if inKeychain(t, kcServerURL) == nil {
		t.Fatal("setup: the small record is not in the keychain")
	}
	big := &oauth2.Token{AccessToken: "at-" + strings.Repeat("x", 2000), RefreshToken: "rt-2"}
	putToken(t, st, kcServerURL, big)
	if inKeychain(t, kcServerURL) != nil || exists(t, st.markerPath(kcServerURL)) {
		t.Error("the older keychain copy (or its marker) is still there")
	}
	if rec, _ := kcStore(dir, logger, modeAuto, osKeyring{}).load(kcServerURL); rec == nil || rec.Token.RefreshToken != "rt-2" {
		t.Fatalf("load = %+v, want the big record from the file", rec)
	}
	if !strings.Contains(logs.String(), "keeping it in a file") || !strings.Contains(logs.String(), keyring.ErrSetDataTooBig.Error()) {
		t.Errorf("the log does not say why the token is in a file:\n%s", logs.String())
	}
	noTokensIn(t, "the log", logs.String(), big)

	for _, tc := range []struct {
		goos string
		n    int
		want bool
	}{
		{"darwin", 2500, false}, {"darwin", 3100, true},
		{"windows", 2560, false}, {"windows", 2561, true},
		{"linux", 1 << 20, false},
	} {
		if got := tooBigForKeychain(tc.goos, keychainService, keychainAccount(kcServerURL), strings.Repeat("v", tc.n)); got != tc.want {
			t.Errorf("tooBigForKeychain(%s, %d bytes) = %v, want %v", tc.goos, tc.n, got, tc.want)
		}
	}
}

// TestConcurrentRefreshKeychain: TestConcurrentRefreshGoroutines with the
// record in the keychain: two Authorizers (each with its own store and
// keychain prober, as two processes) refresh the same expired token at
// once; the lock file still serialises them.
func TestConcurrentRefreshKeychain(t *testing.T) {
	mockKeyring(t, nil)
	as := oauthtest.NewAuthServer(t)
	as.RefreshDelay = 300 * time.Millisecond // widen the window for a race
	data := t.TempDir()
	dir := filepath.Join(data, "tokens")
	logger, logs := testLogger()
	const serverURL = "http://127.0.0.1:1/mcp"
	old := as.IssueExpired()
	err := kcStore(dir, logger, modeAuto, osKeyring{}).update(serverURL, func(rec *record) (bool, error) {
		rec.Token = old
		rec.Client = &clientInfo{ClientID: "c", TokenURL: as.URL + "/token", AuthStyle: oauth2.AuthStyleInParams}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	toks := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			a := New(Options{Paths: config.Paths{DataDir: data}, Logger: logger})
			a.store = kcStore(dir, logger, modeAuto, osKeyring{})
			ts, _ := a.Handler(config.Server{Name: "s", URL: serverURL}, false).TokenSource(context.Background())
			tok, err := ts.Token()
			if err != nil || tok == nil {
				errs[i] = fmt.Errorf("no token: %v", err)
				return
			}
			toks[i] = tok.AccessToken
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("refresher %d: %v", i, errs[i])
		}
	}
	if toks[0] != toks[1] {
		t.Error("the two refreshers ended with different access tokens")
	}
	if c := as.Counts(); c.Refreshes != 1 || c.Reuses != 0 {
		t.Fatalf("want exactly one refresh and no reused refresh token: %+v", c)
	}
	rec := inKeychain(t, serverURL)
	if rec == nil || !as.RefreshValid(rec.Token.RefreshToken) {
		t.Fatal("the refresh token in the keychain is no longer valid: the grant was lost")
	}
	if exists(t, filepath.Join(dir, key(serverURL)+".json")) {
		t.Error("a token file was written although the keychain is in use")
	}
	noTokensIn(t, "the log", logs.String(), old, rec.Token)
}

// TestKeychainLoginLogout: a browser login stores the token and the client
// registration in the keychain, a later process connects with it, and
// logout removes it.
func TestKeychainLoginLogout(t *testing.T) {
	mockKeyring(t, nil)
	f := newFixture(t)
	logger, logs := testLogger()
	withKeychain := func() *Authorizer {
		a := f.authorizer(Options{Logger: logger})
		a.store = kcStore(filepath.Join(f.data, "tokens"), logger, modeAuto, osKeyring{})
		return a
	}
	a := withKeychain()
	if got, err := oauthtest.Connect(f.ctx, f.endpoint, a.Handler(f.srv, true)); err != nil || got != "echo: hi" {
		t.Fatalf("login: %q, %v", got, err)
	}
	rec := inKeychain(t, f.endpoint)
	if rec == nil || rec.Token == nil || len(rec.Registrations) != 1 {
		t.Fatalf("keychain after login = %+v, want the token and the client registration", rec)
	}
	if exists(t, a.TokenFile(f.srv)) {
		t.Error("the login wrote a token file although the keychain is in use")
	}
	if got, err := oauthtest.Connect(f.ctx, f.endpoint, withKeychain().Handler(f.srv, false)); err != nil || got != "echo: hi" {
		t.Fatalf("a later process with the keychain's token: %q, %v", got, err)
	}
	if err := a.Logout(f.srv); err != nil {
		t.Fatal(err)
	}
	if inKeychain(t, f.endpoint) != nil {
		t.Error("logout left the token in the keychain")
	}
	if _, err := oauthtest.Connect(f.ctx, f.endpoint, withKeychain().Handler(f.srv, false)); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("after logout: got %v, want ErrLoginRequired", err)
	}
	noTokensIn(t, "the log", logs.String(), rec.Token)
}

// noKeyring fails the test if the keychain is asked at all.
type noKeyring struct{ t *testing.T }

func (n noKeyring) Get(string, string) (string, error) {
	n.t.Error("the keychain was asked")
	return "", keyring.ErrNotFound
}

func (n noKeyring) Set(string, string, string) error {
	n.t.Error("the keychain was asked")
	return nil
}

func (n noKeyring) Delete(string, string) error {
	n.t.Error("the keychain was asked")
	return keyring.ErrNotFound
}

// TestAutoWithoutDBusUsesFile: on Linux without a D-Bus session bus (a
// headless machine, CI) auto uses the file at once, without calling into
// the keychain (which would run dbus-launch).
func TestAutoWithoutDBusUsesFile(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if err := keychainPrecheck(); err == nil {
		t.Skipf("on %s with a D-Bus session bus in /run/user the OS keychain may be there", runtime.GOOS)
	}
	dir := t.TempDir()
	logger, logs := testLogger()
	kc := &keychain{backend: noKeyring{t}, timeout: keychainTimeout, precheck: keychainPrecheck}
	st := newStoreWith(dir, logger, modeAuto, kc)
	putToken(t, st, kcServerURL, &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1"})
	if fi, err := os.Stat(st.path(kcServerURL)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v; want mode 0600", err)
	}
	if err := kc.available(); err == nil || errors.Is(err, errKeychainTimeout) || !strings.Contains(logs.String(), "no D-Bus session bus") {
		t.Errorf("keychain: %v; want it unavailable for want of D-Bus, and logged:\n%s", err, logs.String())
	}
	if had, err := st.remove(kcServerURL); !had || err != nil {
		t.Fatalf("logout: %v, %v", had, err)
	}

	// OTTER_TOKEN_STORE=keychain insists: the write fails and says why.
	t.Setenv(envTokenStore, "keychain")
	strict := newStore(t.TempDir(), logger)
	err := strict.update(kcServerURL, func(rec *record) (bool, error) { rec.Token = &oauth2.Token{AccessToken: "a"}; return true, nil })
	if err == nil || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Fatalf("OTTER_TOKEN_STORE=keychain without D-Bus: got %v, want an error saying there is no D-Bus", err)
	}
}

// TestTokenStoreModeFromEnv: the values of $OTTER_TOKEN_STORE; in a test
// binary auto means file, so that tests never write into the keychain of
// the person running them.
func TestTokenStoreModeFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want tokenStoreMode
		warn bool
	}{
		{"", modeFile, false},
		{"auto", modeFile, false},
		{"file", modeFile, false},
		{"Keychain", modeKeychain, false},
		{"keyring", modeFile, true},
	} {
		t.Setenv(envTokenStore, tc.env)
		logger, logs := testLogger()
		if got := tokenStoreModeFromEnv(logger); got != tc.want {
			t.Errorf("%s=%q: mode %s, want %s", envTokenStore, tc.env, got, tc.want)
		}
		if warned := strings.Contains(logs.String(), "unknown "+envTokenStore); warned != tc.warn {
			t.Errorf("%s=%q: warned %v, want %v:\n%s", envTokenStore, tc.env, warned, tc.warn, logs.String())
		}
	}
}
