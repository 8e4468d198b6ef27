package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGrants: a tree that holds a denied path is granted entry by entry;
// a plain entry as listed, a link by what it leads to, and nothing that
// is, or leads into, a denied path; a read grant inside a writable folder
// is left out (writing includes reading).
func TestGrants(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/.ssh", "home/notes", "other/deep", "elsewhere/sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"home/.ssh/id_rsa", "home/todo.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"home/keys":     filepath.Join(root, "home/.ssh"),        // into the denied tree
		"home/key":      filepath.Join(root, "home/.ssh/id_rsa"), // a file in it
		"home/deep":     filepath.Join(root, "other/deep"),       // a folder elsewhere
		"home/out":      filepath.Join(root, "elsewhere/sub"),    // into the writable folder
		"home/dangling": filepath.Join(root, "gone"),
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	got := grants(Policy{Read: []string{filepath.Join(root, "home")}, Write: []string{filepath.Join(root, "elsewhere")},
		Deny: []string{filepath.Join(root, "home/.ssh")}})
	want := []grant{
		{path: filepath.Join(root, "home/notes"), dir: true},
		{path: filepath.Join(root, "home/todo.txt")},
		{path: filepath.Join(root, "other/deep"), dir: true}, // home/deep, resolved; home/out is in the writable folder
		{path: filepath.Join(root, "elsewhere"), dir: true, write: true},
	}
	slices.SortFunc(got, func(a, b grant) int {
		if a.write != b.write {
			if a.write {
				return 1
			}
			return -1
		}
		return strings.Compare(a.path, b.path)
	})
	if !slices.Equal(got, want) {
		t.Errorf("grants:\n got %+v\nwant %+v", got, want)
	}
}
