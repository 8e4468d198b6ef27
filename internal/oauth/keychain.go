package oauth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// envTokenStore chooses where OAuth tokens are kept: "auto" (the default:
// the OS keychain when one answers, else a file), "keychain" (the keychain
// only; an error when it cannot be used) or "file" (files only).
const envTokenStore = "OTTER_TOKEN_STORE"

// tokenStoreMode is a value of $OTTER_TOKEN_STORE.
type tokenStoreMode string

const (
	modeAuto     tokenStoreMode = "auto"
	modeKeychain tokenStoreMode = "keychain"
	modeFile     tokenStoreMode = "file"
)

// tokenStoreModeFromEnv reads $OTTER_TOKEN_STORE. An unknown value is
// reported and means auto. In a test binary auto means file, so that no
// test of any package writes into the keychain of the person running it;
// an explicit "keychain" is still honoured.
func tokenStoreModeFromEnv(logger *slog.Logger) tokenStoreMode {
	v := strings.ToLower(strings.TrimSpace(os.Getenv(envTokenStore)))
	mode := modeAuto
	switch tokenStoreMode(v) {
	case "", modeAuto:
	case modeKeychain, modeFile:
		mode = tokenStoreMode(v)
	default:
		logger.Warn("oauth: unknown "+envTokenStore+" value; using auto (the OS keychain when available, else a file)",
			"value", v, "valid", "auto, keychain, file")
	}
	if mode == modeAuto && testing.Testing() {
		mode = modeFile
	}
	return mode
}

// keychainService is the service name of otter's keychain entries.
const keychainService = "otter"

// keychainProbeAccount is an account otter never stores: looking it up
// tells whether the keychain answers.
const keychainProbeAccount = "oauth:probe"

// keychainTimeout bounds each keychain call. go-keyring's calls take no
// context, and a locked Linux Secret Service waits for the person to type a
// password into an unlock dialog.
const keychainTimeout = 3 * time.Second

// keychainAccount is the account (user) name of serverURL's keychain entry:
// the URL's SHA-256, like the file name, so that a URL that carries a
// secret in its query does not show in the keychain's list.
func keychainAccount(serverURL string) string { return "oauth:" + key(serverURL) }

// errKeychainTimeout is wrapped by the error of a keychain call that did
// not return in time.
var errKeychainTimeout = errors.New("the OS keychain did not answer")

// errFileMode is why the keychain is not used when $OTTER_TOKEN_STORE=file.
var errFileMode = errors.New(envTokenStore + "=file")

// keyringBackend is the part of go-keyring's API otter uses; tests
// substitute their own.
type keyringBackend interface {
	Get(service, user string) (string, error)
	Set(service, user, value string) error
	Delete(service, user string) error
}

// osKeyringMu serialises calls into go-keyring: one unlock dialog at a
// time, and its in-memory mock is not safe for concurrent use.
var osKeyringMu sync.Mutex

// osKeyring is the OS keychain through go-keyring: the macOS keychain, the
// Windows credential manager, or the Secret Service (GNOME Keyring,
// KWallet) over D-Bus.
type osKeyring struct{}

func (osKeyring) Get(service, user string) (string, error) {
	osKeyringMu.Lock()
	defer osKeyringMu.Unlock()
	return keyring.Get(service, user)
}

func (osKeyring) Set(service, user, value string) error {
	if tooBigForKeychain(runtime.GOOS, service, user, value) {
		return keyring.ErrSetDataTooBig
	}
	osKeyringMu.Lock()
	defer osKeyringMu.Unlock()
	return keyring.Set(service, user, value)
}

func (osKeyring) Delete(service, user string) error {
	osKeyringMu.Lock()
	defer osKeyringMu.Unlock()
	return keyring.Delete(service, user)
}

// tooBigForKeychain reports whether value exceeds what goos's keychain
// takes through go-keyring. go-keyring checks too, but on macOS only after
// it has started /usr/bin/security, which then waits forever on its input.
func tooBigForKeychain(goos, service, user, value string) bool {
	switch goos {
	case "darwin":
		// go-keyring sends `add-generic-password -U -s S -a A -w W` with W
		// the base64 of the value behind a prefix, each shell-quoted,
		// and refuses commands over 4096 bytes; allow for the quoting.
		const overhead = len("add-generic-password -U -s '' -a '' -w 'go-keyring-base64:'\n") + 16
		return overhead+len(service)+len(user)+base64.StdEncoding.EncodedLen(len(value)) > 4096
	case "windows":
		return len(value) > 2560 // the credential manager's limit on a blob
	}
	return false
}

// keychain is the OS keychain as otter uses it: each call bounded by a
// timeout, and unusable for the rest of the process once a call timed out
// (the call may still be waiting on an unlock dialog) or the first probe
// failed.
type keychain struct {
	backend keyringBackend
	timeout time.Duration
	// precheck, if set, tells cheaply that the keychain cannot be there,
	// before the first call into the backend.
	precheck func() error

	mu     sync.Mutex
	probed bool
	err    error // why the keychain cannot be used; sticky
}

// systemKeychain is the process's OS keychain, probed once for all stores.
var systemKeychain = sync.OnceValue(func() *keychain {
	return &keychain{backend: osKeyring{}, timeout: keychainTimeout, precheck: keychainPrecheck}
})

// keychainPrecheck reports why the OS keychain cannot be there. On Linux
// and the BSDs the keychain is the Secret Service on the D-Bus session
// bus: without a bus address go-keyring would run dbus-launch, which on a
// headless machine starts a stray bus daemon or fails after a delay.
func keychainPrecheck() error {
	switch runtime.GOOS {
	case "darwin", "windows":
		return nil
	}
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return nil
	}
	// Where the D-Bus library looks when the variable is not set.
	run := filepath.Join("/run/user", strconv.Itoa(os.Getuid()))
	for _, name := range []string{"bus", "dbus-session"} {
		if _, err := os.Stat(filepath.Join(run, name)); err == nil {
			return nil
		}
	}
	return errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no Secret Service")
}

// available reports why the keychain cannot be used, or nil. The first
// call probes it.
func (k *keychain) available() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.probed {
		return k.err
	}
	k.probed = true
	if k.precheck != nil {
		if err := k.precheck(); err != nil {
			k.err = err
			return err
		}
	}
	_, err := k.call(func() (string, error) { return k.backend.Get(keychainService, keychainProbeAccount) })
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		k.err = err
	}
	return k.err
}

// call runs fn with the timeout. A call that times out is left running
// (it cannot be cancelled) and makes the keychain unusable. The caller of
// call may hold k.mu; call never takes it.
func (k *keychain) call(fn func() (string, error)) (string, error) {
	type result struct {
		v   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	t := time.NewTimer(k.timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-t.C:
		return "", fmt.Errorf("%w within %v (locked, waiting for its password?)", errKeychainTimeout, k.timeout)
	}
}

// do runs one call on a keychain that passed its probe.
func (k *keychain) do(fn func() (string, error)) (string, error) {
	if err := k.available(); err != nil {
		return "", err
	}
	v, err := k.call(fn)
	if errors.Is(err, errKeychainTimeout) {
		k.mu.Lock()
		k.err = err
		k.mu.Unlock()
	}
	return v, err
}

// get returns serverURL's entry; an error wrapping keyring.ErrNotFound if
// there is none.
func (k *keychain) get(serverURL string) (string, error) {
	return k.do(func() (string, error) { return k.backend.Get(keychainService, keychainAccount(serverURL)) })
}

// set stores value as serverURL's entry, replacing any.
func (k *keychain) set(serverURL, value string) error {
	_, err := k.do(func() (string, error) { return "", k.backend.Set(keychainService, keychainAccount(serverURL), value) })
	return err
}

// delete removes serverURL's entry; an error wrapping keyring.ErrNotFound
// if there was none.
func (k *keychain) delete(serverURL string) error {
	_, err := k.do(func() (string, error) { return "", k.backend.Delete(keychainService, keychainAccount(serverURL)) })
	return err
}
