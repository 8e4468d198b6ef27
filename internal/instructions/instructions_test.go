package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree writes files (path relative to root → content) under a new
// temporary directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, text := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, "/") {
			continue
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		work     string // under root
		trusted  bool
		fallback []string // nil: the default
		maxBytes int
		want     []string // paths read, relative to root, in order
		held     []string
		cut      bool
	}{
		{
			name: "user then project root down to the working directory",
			files: map[string]string{
				"cfg/AGENTS.md": "user", "repo/AGENTS.md": "root", "repo/a/AGENTS.md": "a", "repo/a/b/AGENTS.md": "b",
				"AGENTS.md": "above the project: never read",
			},
			work: "repo/a/b", trusted: true,
			want: []string{"cfg/AGENTS.md", "repo/AGENTS.md", "repo/a/AGENTS.md", "repo/a/b/AGENTS.md"},
		},
		{
			name:  "CLAUDE.md where a directory has no AGENTS.md, AGENTS.md wins where both are",
			files: map[string]string{"repo/AGENTS.md": "root", "repo/CLAUDE.md": "not read", "repo/a/CLAUDE.md": "claude", "repo/a/GEMINI.md": "not read"},
			work:  "repo/a", trusted: true,
			want: []string{"repo/AGENTS.md", "repo/a/CLAUDE.md"},
		},
		{
			name:  "GEMINI.md when neither of the others",
			files: map[string]string{"repo/GEMINI.md": "gemini"},
			work:  "repo", trusted: true,
			want: []string{"repo/GEMINI.md"},
		},
		{
			name:  "fallback = [] reads AGENTS.md only",
			files: map[string]string{"repo/CLAUDE.md": "claude"},
			work:  "repo", trusted: true, fallback: []string{},
		},
		{
			name:  "an untrusted project's files are held back, the user's read",
			files: map[string]string{"cfg/AGENTS.md": "user", "repo/AGENTS.md": "root", "repo/a/CLAUDE.md": "claude"},
			work:  "repo/a",
			want:  []string{"cfg/AGENTS.md"},
			held:  []string{"repo/AGENTS.md", "repo/a/CLAUDE.md"},
		},
		{
			name:  "the cap cuts the later files and says so",
			files: map[string]string{"repo/AGENTS.md": "line one\nline two\n", "repo/a/AGENTS.md": "more\n"},
			work:  "repo/a", trusted: true, maxBytes: 12,
			want: []string{"repo/AGENTS.md", "repo/a/AGENTS.md"}, cut: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, tc.files)
			set := Load(Options{
				UserDir: filepath.Join(root, "cfg"), ProjectRoot: filepath.Join(root, "repo"),
				WorkDir: filepath.Join(root, tc.work), Trusted: tc.trusted, Fallback: tc.fallback, MaxBytes: tc.maxBytes,
			})
			var got, held []string
			for _, f := range set.Files {
				got = append(got, rel(t, root, f.Path))
			}
			for _, h := range set.Held {
				held = append(held, rel(t, root, h))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			if strings.Join(held, " ") != strings.Join(tc.held, " ") {
				t.Errorf("held %q, want %q", held, tc.held)
			}
			if set.Cut != tc.cut {
				t.Errorf("Cut = %v, want %v", set.Cut, tc.cut)
			}
			prompt := set.Prompt()
			for _, f := range set.Files {
				if f.Text != "" && !strings.Contains(prompt, "## "+f.Path+"\n") {
					t.Errorf("the prompt does not mark %s with its path:\n%s", f.Path, prompt)
				}
			}
			if len(set.Files) == 0 && prompt != "" {
				t.Errorf("no file read, yet a prompt: %q", prompt)
			}
		})
	}
}

func rel(t *testing.T, root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

func TestCapCutsAtALineAndSaysWhere(t *testing.T) {
	root := tree(t, map[string]string{"AGENTS.md": "first line\nsecond line\n", "a/AGENTS.md": "never fits\n"})
	set := Load(Options{ProjectRoot: root, WorkDir: filepath.Join(root, "a"), Trusted: true, MaxBytes: 15})
	if len(set.Files) != 2 {
		t.Fatalf("files: %+v", set.Files)
	}
	if got := set.Files[0].Text; got != "first line\n" {
		t.Errorf("cut text = %q, want the first whole line", got)
	}
	if set.Files[1].Text != "" || !set.Files[1].Cut {
		t.Errorf("the file past the cap: %+v", set.Files[1])
	}
	p := set.Prompt()
	if !strings.Contains(p, "cut these instructions at 15 bytes") || !strings.Contains(p, filepath.Join(root, "a", "AGENTS.md")) {
		t.Errorf("the prompt does not say what was cut:\n%s", p)
	}
	if strings.Contains(p, "never fits") || strings.Contains(p, "second line") {
		t.Errorf("text past the cap was sent:\n%s", p)
	}
}

func TestLoaderReadsAgainOnlyOnChange(t *testing.T) {
	root := tree(t, map[string]string{"AGENTS.md": "one"})
	l := NewLoader(Options{ProjectRoot: root, WorkDir: filepath.Join(root), Trusted: true})
	first, _ := l.Load()
	again, changed := l.Load()
	if changed || first.Prompt() != again.Prompt() {
		t.Fatalf("nothing changed, yet changed=%v", changed)
	}
	// A file appearing where none was (the working directory's CLAUDE.md
	// under a new sub-directory is not a candidate; one beside AGENTS.md
	// loses to it) and an edit.
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("two, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, changed := l.Load()
	if !changed || !strings.Contains(set.Prompt(), "two, longer") {
		t.Errorf("an edit was not read: changed=%v\n%s", changed, set.Prompt())
	}
	// Same size, new modification time.
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("three, long"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(root, "AGENTS.md"), future, future); err != nil {
		t.Fatal(err)
	}
	if set, changed := l.Load(); !changed || !strings.Contains(set.Prompt(), "three, long") {
		t.Errorf("a same-size edit was not read: changed=%v", changed)
	}
	if err := os.Remove(filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if set, changed := l.Load(); !changed || set.Prompt() != "" {
		t.Errorf("a removed file is still sent: changed=%v %q", changed, set.Prompt())
	}
}

func TestCandidatesOutsideTheRootReadOnlyTheWorkDir(t *testing.T) {
	dirs := Candidates(Options{ProjectRoot: "/repo", WorkDir: "/elsewhere/x"})
	if len(dirs) != 1 || dirs[0].Path != "/elsewhere/x" {
		t.Errorf("dirs = %+v", dirs)
	}
}

// loadWithin runs Load and fails the test when it takes more than 5 s (a
// read that waits on a named pipe never returns).
func loadWithin(t *testing.T, o Options) Set {
	t.Helper()
	done := make(chan Set, 1)
	go func() { done <- Load(o) }()
	select {
	case set := <-done:
		return set
	case <-time.After(5 * time.Second):
		t.Fatal("Load did not return within 5 s")
		return Set{}
	}
}

// TestProjectFilesThatLeadOutAreNotRead: in a trusted project, an
// AGENTS.md that links to ~/.ssh/id_rsa is not read and the error names
// it and the key; a named pipe called AGENTS.md is refused at once; an
// AGENTS.md linked to a file inside the project, and the user's own
// AGENTS.md linked anywhere, are read. Before, the key went into the
// system prompt and the pipe hung otter.
func TestProjectFilesThatLeadOutAreNotRead(t *testing.T) {
	root := tree(t, map[string]string{
		"home/.ssh/id_rsa":    "PRIVATE-KEY\n",
		"home/rules.md":       "USER-RULE\n",
		"proj/.git/HEAD":      "ref: refs/heads/main\n",
		"proj/docs/agents.md": "INSIDE-RULE\n",
	})
	for _, d := range []string{"user", "proj/leaky/piped/work"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(root, "home", ".ssh", "id_rsa")
	links := map[string]string{
		"user/AGENTS.md":       filepath.Join(root, "home", "rules.md"),
		"proj/AGENTS.md":       "docs/agents.md",
		"proj/leaky/AGENTS.md": key,
	}
	for link, to := range links {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(root, "proj", "leaky", "piped", "work", "AGENTS.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	set := loadWithin(t, Options{
		UserDir:     filepath.Join(root, "user"),
		ProjectRoot: filepath.Join(root, "proj"),
		WorkDir:     filepath.Join(root, "proj", "leaky", "piped", "work"),
		Trusted:     true,
	})
	prompt := set.Prompt()
	if strings.Contains(prompt, "PRIVATE-KEY") || !strings.Contains(prompt, "USER-RULE") || !strings.Contains(prompt, "INSIDE-RULE") {
		t.Errorf("want the user's rule and the rule inside the project, not the key:\n%s", prompt)
	}
	var errs []string
	for _, err := range set.Errors {
		errs = append(errs, err.Error())
	}
	all := strings.Join(errs, "\n")
	for _, want := range []string{
		"instruction file " + filepath.Join(root, "proj", "leaky", "AGENTS.md") + " links to " + key + ", outside the project",
		"instruction file " + fifo + " is a named pipe (FIFO), not a regular file",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the errors do not say %q:\n%s", want, all)
		}
	}
}
