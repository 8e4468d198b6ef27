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
	"testing"

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
