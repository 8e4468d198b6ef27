package projectfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/projectfile"
)

// tree makes a project and, beside it, a home with .ssh/id_rsa; the
// project links to the key (leak.txt), to the whole .ssh folder (dir), to
// a file of its own (alias.md) and holds a named pipe (fifo).
func tree(t *testing.T) (proj, key string) {
	t.Helper()
	base := t.TempDir()
	proj = filepath.Join(base, "proj")
	ssh := filepath.Join(base, "home", ".ssh")
	key = filepath.Join(ssh, "id_rsa")
	for _, d := range []string{proj, ssh} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, key, "PRIVATE KEY")
	write(t, filepath.Join(proj, "real.md"), "inside")
	for link, to := range map[string]string{"leak.txt": key, "dir": ssh, "alias.md": "real.md"} {
		if err := os.Symlink(to, filepath.Join(proj, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return proj, key
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// within runs f and fails the test when it takes more than 5 s (an open
// that waits for a pipe's writer never returns).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return within 5 s", what)
	}
}

func TestReadFileConfinesToTheProject(t *testing.T) {
	t.Parallel()
	proj, key := tree(t)
	for _, name := range []string{"leak.txt", "dir/id_rsa"} {
		data, err := projectfile.ReadFile(proj, filepath.Join(proj, name), 1<<10)
		var oe *projectfile.OutsideError
		if !errors.As(err, &oe) {
			t.Fatalf("%s: read %q, err %v; want an *OutsideError", name, data, err)
		}
		if oe.Target != key || !strings.Contains(err.Error(), "links to "+key) || !strings.Contains(err.Error(), filepath.Join(proj, name)) {
			t.Errorf("%s: %v; want it to name the file and %s", name, err, key)
		}
	}
	data, err := projectfile.ReadFile(proj, filepath.Join(proj, "alias.md"), 1<<10)
	if err != nil || string(data) != "inside" {
		t.Errorf("a link inside the project: %q, %v", data, err)
	}
	// Without a root (the user's own files), links lead anywhere.
	if data, err := projectfile.ReadFile("", filepath.Join(proj, "leak.txt"), 1<<10); err != nil || string(data) != "PRIVATE KEY" {
		t.Errorf("no root: %q, %v", data, err)
	}
}

func TestReadFileRefusesANamedPipeAtOnce(t *testing.T) {
	t.Parallel()
	proj, _ := tree(t)
	fifo := filepath.Join(proj, "fifo")
	if err := os.Symlink(fifo, filepath.Join(proj, "pipe.md")); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{proj, ""} {
		for _, p := range []string{fifo, filepath.Join(proj, "pipe.md")} {
			within(t, "ReadFile("+p+")", func() {
				_, err := projectfile.ReadFile(root, p, 1<<10)
				if !errors.Is(err, projectfile.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
					t.Errorf("root %q, %s: %v; want ErrNotRegular naming a named pipe", root, p, err)
				}
			})
		}
	}
}

func TestReadFileCaps(t *testing.T) {
	t.Parallel()
	proj, _ := tree(t)
	p := filepath.Join(proj, "big.md")
	write(t, p, strings.Repeat("x", 2049))
	_, err := projectfile.ReadFile(proj, p, 2048)
	if !errors.Is(err, projectfile.ErrTooLarge) || !strings.Contains(err.Error(), "2 KiB") {
		t.Errorf("over the cap: %v", err)
	}
	if data, err := projectfile.ReadFile(proj, p, 4096); err != nil || len(data) != 2049 {
		t.Errorf("under the cap: %d bytes, %v", len(data), err)
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{812: "812 B", 256 << 10: "256 KiB", 262_145: "256 KiB", 4200: "4.1 KiB", 5 << 20: "5 MiB", 2_400_000: "2.3 MiB"} {
		if got := projectfile.Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestReadDirDoesNotOpenANamedPipe: ReadDir of a pipe is an error at once
// (os.ReadDir waits in open(2) for a writer); of a folder, its entries.
func TestReadDirDoesNotOpenANamedPipe(t *testing.T) {
	t.Parallel()
	proj, _ := tree(t)
	within(t, "ReadDir(fifo)", func() {
		if _, err := projectfile.ReadDir(filepath.Join(proj, "fifo")); err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a directory") {
			t.Errorf("ReadDir(fifo): %v", err)
		}
	})
	entries, err := projectfile.ReadDir(proj)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if err != nil || strings.Join(names, " ") != "alias.md dir fifo leak.txt real.md" {
		t.Errorf("ReadDir(proj) = %q, %v", names, err)
	}
}
