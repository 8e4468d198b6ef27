package attach_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otter-sh/otter/internal/attach"
)

func TestFileMentions(t *testing.T) {
	t.Parallel()
	known := func(s string) bool { return s == "docs" }
	cases := []struct {
		text string
		want []string
	}{
		{"summarise @notes.txt.", []string{"notes.txt"}},
		{`read @"with spaces.txt" and (@src/main.go)`, []string{"with spaces.txt", "src/main.go"}},
		{"@docs:file:///a.md is a resource, @other:x a path", []string{"other:x"}},
		{"mail me@example.com", nil},
		{"@ alone, @/abs/path", []string{"/abs/path"}},
	}
	for _, c := range cases {
		var got []string
		for _, m := range attach.FileMentions(c.text, known) {
			got = append(got, m.Path)
			if !strings.Contains(c.text[m.Start:m.End], m.Path) || c.text[m.Start] != '@' {
				t.Errorf("%q: offsets %d..%d give %q", c.text, m.Start, m.End, c.text[m.Start:m.End])
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("FileMentions(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// pngBytes is a real 2×2 PNG.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestExpandFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	outside := filepath.Join(root, "secret.txt")
	files := map[string][]byte{
		"proj/notes.txt":         []byte("buy milk\n"),
		"proj/with spaces.txt":   []byte("spaced\n"),
		"proj/pic.png":           pngBytes(t),
		"proj/prog":              {0x7f, 'E', 'L', 'F', 0, 0, 1, 2},
		"proj/big.txt":           bytes.Repeat([]byte("x"), 300),
		"proj/src/a.go":          []byte("package a\n"),
		"proj/src/generated.txt": []byte("ignored\n"),
		"proj/src/.gitignore":    []byte("generated.txt\n"),
		"secret.txt":             []byte("outside\n"),
	}
	for p, data := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec.Command("git", "init", "-q", proj).Run(); err != nil {
		t.Fatalf("git init: %v", err)
	}
	opts := attach.FileOptions{WorkDir: proj, MaxFileBytes: 200}
	cases := []struct {
		name      string
		text      string
		allow     bool
		wantText  []string
		wantNot   []string
		images    int
		wantErr   error
		errSays   string
		outsideOK bool
	}{
		{name: "text", text: "summarise @notes.txt", wantText: []string{`<file path="notes.txt">`, "buy milk"}},
		{name: "quoted", text: `read @"with spaces.txt"`, wantText: []string{"spaced"}},
		{name: "image", text: "what is in @pic.png?", wantText: []string{`<file path="pic.png">[image, image/png`}, images: 1},
		{name: "directory, respecting .gitignore", text: "look at @src/", wantText: []string{"a.go", ".gitignore"}, wantNot: []string{"generated.txt"}},
		{name: "binary refused by name", text: "run @prog", wantErr: attach.ErrBinary, errSays: "@prog"},
		{name: "over the cap", text: "@big.txt", wantErr: attach.ErrTooLarge, errSays: "200 B"},
		{name: "a missing path", text: "@nope.txt", wantErr: attach.ErrNoFile, errSays: "@nope.txt"},
		{name: "a handle stays text", text: "thanks @alice", wantText: []string{"thanks @alice"}, wantNot: []string{"<file"}},
		{name: "outside refused", text: "@../secret.txt", errSays: "outside the project"},
		{name: "outside allowed", text: "@" + outside, allow: true, wantText: []string{"outside\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := opts
			if c.allow {
				o.AllowOutside = func(_ context.Context, p string) (bool, error) { return p == outside, nil }
			}
			ex, err := attach.Expander{Files: &o}.Expand(context.Background(), c.text)
			if c.wantErr != nil || c.errSays != "" {
				if err == nil {
					t.Fatalf("no error; sent %q", ex.Text)
				}
				if c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Errorf("err = %v, want %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.errSays) {
					t.Errorf("err %q does not say %q", err, c.errSays)
				}
				var oe *attach.OutsideError
				if strings.Contains(c.errSays, "outside") && !errors.As(err, &oe) {
					t.Errorf("err %T is not an *OutsideError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.wantText {
				if !strings.Contains(ex.Text, w) {
					t.Errorf("the message does not hold %q:\n%s", w, ex.Text)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(ex.Text, w) {
					t.Errorf("the message holds %q:\n%s", w, ex.Text)
				}
			}
			if len(ex.Images) != c.images {
				t.Errorf("%d images, want %d", len(ex.Images), c.images)
			}
		})
	}
}

func TestCompletePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"notes.txt", "node_modules/x.js", "nope.log", "src/main.go", ".hidden"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
		t.Fatalf("git init: %v", err)
	}
	ctx := context.Background()
	cases := []struct{ prefix, want string }{
		{"no", "notes.txt"},
		{"", "notes.txt src/"},
		{"src/m", "src/main.go"},
		{".h", ".hidden"},
	}
	for _, c := range cases {
		if got := strings.Join(attach.CompletePath(ctx, dir, c.prefix), " "); got != c.want {
			t.Errorf("CompletePath(%q) = %q, want %q", c.prefix, got, c.want)
		}
	}
}

// linkedProject is a project that links to a private key outside it, in a
// home of its own: leak.txt to the key, dir to its folder; and a named
// pipe, fifo.
func linkedProject(t *testing.T) (proj, key string) {
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
	if err := os.WriteFile(key, []byte("-----BEGIN PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"leak.txt": key, "dir": ssh, "alias.txt": "notes.txt"} {
		if err := os.Symlink(to, filepath.Join(proj, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return proj, key
}

// TestExpandResolvesLinksBeforeTheProjectCheck: @leak.txt, a link in the
// project to ~/.ssh/id_rsa, and @dir/id_rsa through a linked folder are
// outside the project — refused naming where they lead, or, allowed,
// asked about by their target — while a link inside the project is
// attached. Before, the check compared the paths as written and attached
// the key.
func TestExpandResolvesLinksBeforeTheProjectCheck(t *testing.T) {
	t.Parallel()
	proj, key := linkedProject(t)
	for _, text := range []string{"read @leak.txt", "read @dir/id_rsa", "list @dir/"} {
		ex, err := attach.Expander{Files: &attach.FileOptions{WorkDir: proj}}.Expand(context.Background(), text)
		var oe *attach.OutsideError
		if !errors.As(err, &oe) {
			t.Fatalf("%s: err %v, sent %q; want an *OutsideError", text, err, ex.Text)
		}
		if !strings.HasPrefix(oe.Target, filepath.Dir(key)) || !strings.Contains(err.Error(), "links to "+oe.Target) {
			t.Errorf("%s: %v; want it to say it links to %s", text, err, key)
		}
		var asked []string
		allow := func(_ context.Context, p string) (bool, error) { asked = append(asked, p); return true, nil }
		ex, err = attach.Expander{Files: &attach.FileOptions{WorkDir: proj, AllowOutside: allow}}.Expand(context.Background(), text)
		if err != nil || len(asked) != 1 || !strings.HasPrefix(asked[0], filepath.Dir(key)) {
			t.Errorf("%s, allowed: err %v, asked about %q; want one question naming the target", text, err, asked)
		}
	}
	long := strings.Repeat("0123456789abcde\n", 1000) // longer than the head otter sniffs
	if err := os.WriteFile(filepath.Join(proj, "notes.txt"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	ex, err := attach.Expander{Files: &attach.FileOptions{WorkDir: proj}}.Expand(context.Background(), "read @alias.txt")
	if err != nil || !strings.Contains(ex.Text, "\n"+long+"</file>") {
		t.Errorf("a link inside the project: %v, %d bytes sent; want the file whole", err, len(ex.Text))
	}
}

// TestExpandRefusesANamedPipeAtOnce: @fifo (and a link to it) is refused
// as a named pipe within a second. Before, the open waited for a writer
// for good.
func TestExpandRefusesANamedPipeAtOnce(t *testing.T) {
	t.Parallel()
	proj, _ := linkedProject(t)
	if err := os.Symlink("fifo", filepath.Join(proj, "pipe.txt")); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"read @fifo", "read @pipe.txt", "read @" + filepath.Join(proj, "fifo")} {
		errc := make(chan error, 1)
		go func() {
			_, err := attach.Expander{Files: &attach.FileOptions{WorkDir: proj}}.Expand(context.Background(), text)
			errc <- err
		}()
		select {
		case err := <-errc:
			if !errors.Is(err, attach.ErrNotRegular) || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") {
				t.Errorf("%s: %v; want ErrNotRegular saying it is a named pipe", text, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Expand did not return within 5 s", text)
		}
	}
}

// TestCompletePathDoesNotOpenANamedPipe: completing @fifo/ returns at once
// with nothing. Before, os.ReadDir opened the pipe and waited for good.
func TestCompletePathDoesNotOpenANamedPipe(t *testing.T) {
	t.Parallel()
	proj, _ := linkedProject(t)
	done := make(chan []string, 1)
	go func() { done <- attach.CompletePath(context.Background(), proj, "fifo/") }()
	select {
	case got := <-done:
		if len(got) != 0 {
			t.Errorf("CompletePath(fifo/) = %q, want none", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CompletePath(fifo/) did not return within 5 s")
	}
	if got := strings.Join(attach.CompletePath(context.Background(), proj, "f"), " "); got != "fifo" {
		t.Errorf("CompletePath(f) = %q, want the pipe listed by name", got)
	}
}

// TestRefusalsReadAsSentences: each refusal is a sentence of its own, in
// binary units as the caps are documented (256 KiB, not 262.1 kB).
func TestRefusalsReadAsSentences(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "huge.txt"), bytes.Repeat([]byte("x\n"), 200<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := attach.Expander{Files: &attach.FileOptions{WorkDir: proj}}.Expand(context.Background(), "@huge.txt")
	want := "@huge.txt is too large to attach: the file is 400 KiB; otter attaches text files up to 256 KiB, so attach a part of it"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
