package attach

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otter-sh/otter/internal/testpeer"
)

// Issue 34 item 2: listing a folder for @ runs nothing a repository's own
// git configuration names (core.fsmonitor would run on `git check-ignore`).
func TestListDirRunsNoGit(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	testpeer.WriteTree(t, root, map[string]string{
		".git/HEAD":   "ref: refs/heads/main\n",
		".git/config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch " + marker + "; false #\"\n",
		".gitignore":  "*.log\n",
		"a.log":       "", "b.txt": "",
	})
	if err := os.MkdirAll(filepath.Join(root, ".git", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := ListDir(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != ".gitignore b.txt" {
		t.Errorf("ListDir = %q, want .gitignore b.txt", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("listing the folder ran the repository's core.fsmonitor")
	}
}
