package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/otter-sh/otter/internal/secret"
)

// Outcomes of a tool call, as recorded in the audit ledger and in the
// otter_serve_tool_calls_total metric.
const (
	OutcomeOK          = "ok"           // the tool ran and succeeded
	OutcomeError       = "error"        // the tool ran and failed, or the call failed
	OutcomeDenied      = "denied"       // refused before the tool ran (per-client quota)
	OutcomeRateLimited = "rate_limited" // otter's own rate limit refused the call (RATE_LIMITED); a site's 429 is an error
)

// MaxAuditArgBytes bounds the (masked) arguments one ledger record keeps:
// past it the record says how long they were instead, so that a client
// cannot grow the ledger by megabytes per call, refused calls included.
const MaxAuditArgBytes = 16 << 10

// AuditRecord is one line of the audit ledger.
type AuditRecord struct {
	Time time.Time `json:"time"`
	// Replica names the server that handled the call, when several
	// replicas share their limits ([serve] replica_id).
	Replica   string          `json:"replica,omitempty"`
	Client    string          `json:"client"`            // "key:<hash>", "addr:<ip>" or "stdio"
	Session   string          `json:"session,omitempty"` // the MCP session ID (HTTP only)
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"` // with secrets masked
	// ArgumentsCut says why Arguments is missing: they were longer than
	// MaxAuditArgBytes ("4194304 bytes, over the 16384 a record keeps").
	ArgumentsCut string  `json:"arguments_cut,omitempty"`
	Outcome      string  `json:"outcome"`
	Code         string  `json:"code,omitempty"` // the tool's error code (RATE_LIMITED, …), if any
	Error        string  `json:"error,omitempty"`
	DurationMS   float64 `json:"duration_ms"`
}

// Ledger is the append-only audit ledger: one JSON line per tool call.
//
// The file is opened with O_APPEND|O_CREATE and mode 0600. Writes are
// serialized by a mutex, each record is written with a single write(2) and
// then fsynced, so a record that Append returned for survives a crash of
// otter or of the machine. Tool calls are network-bound, so the fsync per
// call costs little next to the call itself.
type Ledger struct {
	mu   sync.Mutex
	f    *os.File
	path string
	sync bool // fsync each record (a file; not stdout)
}

// LedgerStdout is the ledger path that writes records to standard output,
// one JSON line each, for a log collector.
const LedgerStdout = "-"

// OpenLedger opens (creating it and its directory if needed) the ledger at
// path, or standard output for LedgerStdout.
func OpenLedger(path string) (*Ledger, error) {
	if path == LedgerStdout {
		return &Ledger{f: os.Stdout, path: "stdout"}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit ledger: create directory for %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit ledger: open %s: %w (set [serve] audit_log to a writable file)", path, err)
	}
	return &Ledger{f: f, path: path, sync: true}, nil
}

// Path is the ledger's file.
func (l *Ledger) Path() string { return l.path }

// Append writes rec as one line and syncs the file.
func (l *Ledger) Append(rec AuditRecord) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit ledger: encode record: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("audit ledger %s is closed", l.path)
	}
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("audit ledger: write %s: %w", l.path, err)
	}
	if !l.sync {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("audit ledger: sync %s: %w", l.path, err)
	}
	return nil
}

// Close closes the file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	if !l.sync { // stdout stays open for the rest of the process
		l.f = nil
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// masked replaces a secret value.
const masked = secret.Mask

// MaskSecrets returns args with the values of secret-named keys replaced by
// "****" at any depth, and with secrets inside string values masked (see
// maskString): URL userinfo and secret query parameters
// (https://user:****@host/?api_key=****, http://****@proxy), Bearer and
// Basic credentials, secret key=value pairs of form bodies
// (password=****&username=bob) and JSON text. Arguments that are not JSON
// are replaced by a note, never logged raw.
func MaskSecrets(args json.RawMessage) json.RawMessage {
	out, _ := maskArguments(args)
	return out
}

// maskArguments is MaskSecrets that also returns the secret strings it
// masked (values of secret-named keys), so that they can be hidden in the
// call's error text too.
func maskArguments(args json.RawMessage) (json.RawMessage, []string) {
	if len(args) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return json.RawMessage(`"(arguments are not valid JSON)"`), nil
	}
	var secrets []string
	v = maskValue(v, &secrets)
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`"(arguments could not be encoded)"`), nil
	}
	return out, secrets
}

func maskValue(v any, secrets *[]string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if secret.SensitiveKey(k) {
				collectStrings(e, secrets)
				v[k] = masked
			} else {
				v[k] = maskValue(e, secrets)
			}
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = maskValue(e, secrets)
		}
		return v
	case string:
		return maskString(v, secrets)
	}
	return v
}

// maskString masks the secrets inside one string value, which may be a
// request body, a header value or a proxy URL: a string that is a JSON
// object or array is masked like the arguments themselves; otherwise URLs
// in it (see secret.MaskURL), Bearer and Basic credentials, and secret-named
// key=value pairs of form-encoded or query-like text are masked. The
// masked values are appended to secrets.
func maskString(s string, secrets *[]string) string {
	if t := strings.TrimSpace(s); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			if out, err := json.Marshal(maskValue(v, secrets)); err == nil {
				return string(out)
			}
		}
	}
	return secret.MaskTextCollect(s, secrets)
}

// collectStrings appends the strings in v (at any depth) to out.
func collectStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case map[string]any:
		for _, e := range v {
			collectStrings(e, out)
		}
	case []any:
		for _, e := range v {
			collectStrings(e, out)
		}
	}
}

// minSecretLen is the shortest secret value hidden in free text: shorter
// ones would mask ordinary words of the message.
const minSecretLen = 4

// maskText hides secrets in free text such as a tool's error message,
// which may quote the arguments: URLs, credentials and key=value pairs are
// masked as in maskString, and each of secrets (at least minSecretLen
// long) is replaced by "****".
func maskText(s string, secrets []string) string {
	s = secret.MaskText(s)
	for _, sec := range secrets {
		if len(sec) >= minSecretLen {
			s = strings.ReplaceAll(s, sec, masked)
		}
	}
	return s
}
