package gitignore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// testGit runs the test's own git in dir with no user or system config.
func testGit(t *testing.T, dir string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	return string(out), err
}

// The ignore rules read without git leave out, directory by directory,
// exactly what `git check-ignore` reports for the same tree: anchored and
// floating patterns, directory-only ones, negations, "**" in every place,
// character classes, escapes, nested .gitignore files overriding the top's,
// .git/info/exclude, and everything inside an ignored directory.
func TestIgnoredEntriesAgreeWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("this test needs git on PATH")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	if _, err := testGit(t, root, "", "init", "-q"); err != nil {
		t.Fatal(err)
	}
	testpeer.WriteTree(t, root, map[string]string{
		".gitignore":        "# comment\n*.log\n!keep.log\n/build\ntmp/\ndocs/**/draft.md\n**/cache\nvendor/**\n[abc]x.txt\nq?.txt\n\\#hash\nspace\\ \n*.o\n!/lib/*.o\nsub/deep/only\n",
		".git/info/exclude": "secret.env\n",
		"a.log":             "", "keep.log": "", "build/out": "", "src/build": "", "tmp/x": "", "src/tmp/y": "",
		"docs/draft.md": "", "docs/a/b/draft.md": "", "cache/z": "", "src/cache/z": "",
		"vendor/v.go": "", "ax.txt": "", "dx.txt": "", "q1.txt": "", "q12.txt": "", "#hash": "",
		"space ": "", "m.o": "", "lib/n.o": "", "lib/x/n.o": "", "secret.env": "", "src/secret.env": "",
		"sub/deep/only": "", "sub/deep/other": "", "sub/.gitignore": "!a.log\nlocal.txt\n", "sub/a.log": "",
		"sub/local.txt": "", "sub/x/local.txt": "", "tmp2/tmp/z": "",
		"ign/.gitignore": "*\n!*.keep\n", "ign/f.keep": "", "ign/g.txt": "",
	})
	var dirs []string
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return filepath.SkipDir
		}
		if e.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			if e.Name() == ".git" {
				continue
			}
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
		// Git is asked about each entry without a trailing slash: it then
		// finds out itself that a directory is one, and answers as `git
		// status` sees it. (With the slash, a directory's own .gitignore
		// applies to the directory itself: "ign/" would be ignored by its
		// "*" though ign/f.keep is not.)
		var in bytes.Buffer
		for _, n := range names {
			in.WriteString(strings.TrimSuffix(n, "/") + "\x00")
		}
		out, _ := testGit(t, dir, in.String(), "check-ignore", "-z", "--stdin")
		var want []string
		for _, n := range strings.Split(out, "\x00") {
			if n == "" {
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.IsDir() {
				n += "/"
			}
			want = append(want, n)
		}
		var got []string
		for n := range Entries(dir, names) {
			got = append(got, n)
		}
		slices.Sort(got)
		slices.Sort(want)
		rel, _ := filepath.Rel(root, dir)
		if !slices.Equal(got, want) {
			t.Errorf("in %s: ignored %q, git says %q", rel, got, want)
		}
		checked += len(names)
	}
	if checked < 40 {
		t.Fatalf("checked only %d entries", checked)
	}
}

// The user's global excludes file counts, from core.excludesFile.
func TestGlobalExcludesFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	testpeer.WriteTree(t, home, map[string]string{".gitconfig": "[user]\n\tname = x\n[core]\n\texcludesFile = \"~/.my-ignore\"\n", ".my-ignore": "*.swp\n"})
	root := t.TempDir()
	testpeer.WriteTree(t, root, map[string]string{".git/HEAD": "", "a.swp": "", "b": ""})
	if got := Entries(root, []string{"a.swp", "b"}); !got["a.swp"] || got["b"] {
		t.Errorf("ignored = %v, want a.swp alone", got)
	}
}
