package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/otter-sh/otter/internal/llm/llmtest"
	"github.com/otter-sh/otter/internal/record"
	"github.com/otter-sh/otter/internal/session"
	"github.com/otter-sh/otter/internal/testpeer"
)

// nobody is the user the test runs otter as when it runs as root, for
// whom permissions do not apply.
const nobody = 65534

// TestReadOnlyDataDir runs the real binary with its data directory made
// read-only (chmod 0500) after a conversation was saved: `otter sessions
// list` and `show` read it; `otter -p` answers and says on stderr that the
// conversation is not saved, naming the directory and what to do; the
// database is left byte for byte as it was, and lists the conversation
// again once writable. Run as root, otter runs as user nobody, since root
// may write anywhere. Before, `sessions list` and `show` failed (exit 2,
// "attempt to write a readonly database"): even a reader of a WAL
// database needs its -shm file, which the directory does not let SQLite
// create.
func TestReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	bin := testpeer.Otter(t)
	asRoot := os.Getuid() == 0
	// A home outside t.TempDir, whose parents only root may enter.
	home, err := os.MkdirTemp("", "otter-readonly-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
		os.RemoveAll(home)
	})
	if asRoot {
		// nobody must reach the binary and the home.
		if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(home, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.New(t, llmtest.Anthropic,
		llmtest.Reply{Text: []string{"First answer."}},
		llmtest.Reply{Text: []string{"Second answer."}},
	)
	cfgDir := filepath.Join(home, "config", "otter")
	work := filepath.Join(home, "project")
	for _, d := range []string{cfgDir, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("[agent]\nprovider = \"fake\"\nmodel = \"fake-model\"\n\n[providers.fake]\ntype = %q\nbase_url = %q\napi_key = \"test-key\"\n", srv.Kind, srv.URL)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if asRoot {
		filepath.WalkDir(home, func(p string, _ fs.DirEntry, err error) error {
			if err == nil {
				err = os.Lchown(p, nobody, nobody)
			}
			return err
		})
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	otter := func(args ...string) (stdout, stderr string, err error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = work, env
		if asRoot {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		return out.String(), errb.String(), err
	}

	if stdout, stderr, err := otter("-p", "the first question"); err != nil || stdout != "First answer.\n" {
		t.Fatalf("otter -p with a writable data directory: %v, %q\n%s", err, stdout, stderr)
	}
	dataDir := filepath.Join(home, "data", "otter")
	db := filepath.Join(dataDir, record.FileName)
	if err := os.Chmod(dataDir, 0o500); err != nil {
		t.Fatal(err)
	}
	before := fileHashes(t, dataDir)

	stdout, stderr, err := otter("sessions", "list", "--json")
	var list []struct{ ID, Title string }
	if err != nil || json.Unmarshal([]byte(stdout), &list) != nil || len(list) != 1 {
		t.Fatalf("otter sessions list --json with the data directory read-only: %v, %q\n%s", err, stdout, stderr)
	}
	if stdout, stderr, err := otter("sessions", "show", list[0].ID); err != nil || !strings.Contains(stdout, "the first question") || !strings.Contains(stdout, "First answer.") {
		t.Errorf("otter sessions show with the data directory read-only: %v, %q\n%s", err, stdout, stderr)
	}

	stdout, stderr, err = otter("-p", "the second question")
	t.Logf("otter -p, read-only: %v; stderr:\n%s", err, stderr)
	if err != nil || stdout != "Second answer.\n" {
		t.Errorf("otter -p with the data directory read-only: %v, %q\n%s", err, stdout, stderr)
	}
	for _, want := range []string{dataDir, "cannot be written", "make " + dataDir + " and the file writable", "this conversation is not saved"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("otter -p's stderr does not say %q:\n%s", want, stderr)
		}
	}
	if after := fileHashes(t, dataDir); !equalMaps(before, after) {
		t.Errorf("the data directory changed while read-only: %v, then %v", before, after)
	}

	if err := os.Chmod(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if l, err := s.List(t.Context(), record.ListOptions{}); err != nil || len(l) != 1 || l[0].ID != list[0].ID {
		t.Errorf("once writable: %d sessions (%v), want the first one", len(l), err)
	}
}

// fileHashes maps each file of dir to its SHA-256.
func fileHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprintf("%x", sha256.Sum256(b))[:12]
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
